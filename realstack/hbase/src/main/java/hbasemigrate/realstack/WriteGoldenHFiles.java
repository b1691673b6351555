package hbasemigrate.realstack;

import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ArrayBackedTag;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Golden HFiles written by HBase's own StoreFileWriter (the writer a flush uses), then printed
 * by HBase's HFilePrettyPrinter (-p -v -m): the files of {@link GoldenCells}. Args: OUT_DIR.
 * For each file X it writes X and X.hbase.txt (what the printer printed).
 */
public final class WriteGoldenHFiles {
  private WriteGoldenHFiles() {
  }

  public static void main(String[] args) throws Exception {
    // the stack's codec classes: HBase's pure-Java SNAPPY, LZ4 and ZSTD (aircompressor)
    Configuration.addDefaultResource(RealHBase.SITE);
    GoldenCells.run(args, HBaseConfiguration.create(), WriteGoldenHFiles::write);
  }

  private static void write(Configuration conf, Path path, GoldenCells.Spec spec)
    throws Exception {
    HFileContext context = GoldenCells.context(spec).withColumnFamily(GoldenCells.F)
      .withTableName(Bytes.toBytes("golden")).build();
    List<KeyValue> cells =
      GoldenCells.keyValues(spec.cells, ArrayBackedTag::new, CellComparatorImpl.COMPARATOR);
    StoreFileWriter writer = new StoreFileWriter.Builder(conf, new CacheConfig(conf),
      FileSystem.getLocal(conf).getRawFileSystem()).withFilePath(path).withFileContext(context)
      .withBloomType(spec.bloom).withMaxKeyCount(cells.size()).build();
    writer.appendMetadata(GoldenCells.appendAll(cells, writer::append), false);
    writer.close();
  }
}
