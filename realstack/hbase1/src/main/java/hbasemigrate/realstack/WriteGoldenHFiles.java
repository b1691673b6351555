package hbasemigrate.realstack;

import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.regionserver.StoreFile;

/**
 * The golden HFiles of {@link GoldenCells} (the hbase module's file, linked here) written by
 * HBase 1.x's StoreFile.Writer (the writer a flush uses) and printed by its HFilePrettyPrinter.
 * Args: OUT_DIR.
 */
public final class WriteGoldenHFiles {
  private WriteGoldenHFiles() {
  }

  public static void main(String[] args) throws Exception {
    GoldenCells.run(args, HBaseConfiguration.create(), WriteGoldenHFiles::write);
  }

  private static void write(Configuration conf, Path path, GoldenCells.Spec spec)
    throws Exception {
    HFileContext context = GoldenCells.context(spec).build();
    List<KeyValue> cells = GoldenCells.keyValues(spec.cells, Tag::new, KeyValue.COMPARATOR);
    StoreFile.Writer writer = new StoreFile.WriterBuilder(conf, new CacheConfig(conf),
      FileSystem.getLocal(conf).getRawFileSystem()).withFilePath(path).withFileContext(context)
      .withBloomType(spec.bloom).withComparator(KeyValue.COMPARATOR)
      .withMaxKeyCount(cells.size()).build();
    writer.appendMetadata(GoldenCells.appendAll(cells, writer::append), false);
    writer.close();
  }
}
