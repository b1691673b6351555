package hbasemigrate.realstack;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.StoreFile;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * The golden HFiles of the 2.x module's WriteGoldenHFiles (the same cells, block sizes,
 * encodings, index settings), written by HBase 1.x's StoreFile.Writer (the writer a flush
 * uses) and printed by its HFilePrettyPrinter (-p -v -m). Args: OUT_DIR. A codec the release
 * cannot load here (SNAPPY and LZ4 need Hadoop's native library) is skipped.
 */
public final class WriteGoldenHFiles {
  private static final byte[] F = Bytes.toBytes("f");
  private static final long T0 = 1700000000000L;

  private WriteGoldenHFiles() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    java.nio.file.Path out = java.nio.file.Paths.get(args[0]).toAbsolutePath();
    Files.createDirectories(out);
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hfile.index.block.max.size", 256);
    conf.set("hbase.rootdir", out.toUri().toString()); // 1.x's printer reads files under it only
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    Compression.Algorithm none = Compression.Algorithm.NONE;
    Compression.Algorithm gz = Compression.Algorithm.GZ;
    write(conf, fs, out, "small", small(), 65536, none, DataBlockEncoding.NONE, BloomType.NONE);
    write(conf, fs, out, "multiblock-crc32", many(), 4096, gz, DataBlockEncoding.NONE,
      BloomType.NONE, ChecksumType.CRC32, 512, false);
    write(conf, fs, out, "multiblock", many(), 512, none, DataBlockEncoding.NONE, BloomType.ROW);
    write(conf, fs, out, "multiblock-gz", many(), 512, gz, DataBlockEncoding.NONE, BloomType.ROW);
    Configuration deep = new Configuration(conf);
    deep.setInt("hfile.index.block.max.size", 128);
    deep.setInt("hfile.index.block.min.entries", 2);
    write(deep, fs, out, "multiblock-3level", many(), 512, none, DataBlockEncoding.NONE,
      BloomType.NONE);
    for (Compression.Algorithm codec : new Compression.Algorithm[] { Compression.Algorithm.SNAPPY,
      Compression.Algorithm.LZ4 }) {
      try {
        codec.returnCompressor(codec.getCompressor());
      } catch (RuntimeException | LinkageError e) {
        System.err.println("skipped multiblock-" + codec.getName() + ": " + e);
        continue;
      }
      write(conf, fs, out, "multiblock-" + codec.getName(), many(), 2048, codec,
        DataBlockEncoding.NONE, BloomType.NONE);
    }
    write(conf, fs, out, "multiblock-rowindex", many(), 512, none, DataBlockEncoding.ROW_INDEX_V1,
      BloomType.NONE);
    write(conf, fs, out, "small-rowindex", small(), 65536, none, DataBlockEncoding.ROW_INDEX_V1,
      BloomType.NONE);
    write(conf, fs, out, "multiblock-prefix", many(), 512, none, DataBlockEncoding.PREFIX,
      BloomType.NONE);
    write(conf, fs, out, "small-prefix", small(), 65536, none, DataBlockEncoding.PREFIX,
      BloomType.NONE);
    write(conf, fs, out, "multiblock-fastdiff", many(), 512, gz, DataBlockEncoding.FAST_DIFF,
      BloomType.NONE);
    write(conf, fs, out, "small-diff", small(), 65536, none, DataBlockEncoding.DIFF,
      BloomType.NONE);
    write(conf, fs, out, "multiblock-diff", many(), 512, none, DataBlockEncoding.DIFF,
      BloomType.NONE);
    write(conf, fs, out, "small-tagcompression", small(), 65536, none, DataBlockEncoding.FAST_DIFF,
      BloomType.NONE, ChecksumType.CRC32C, 16384, true);
    write(conf, fs, out, "small-fastdiff", small(), 65536, none, DataBlockEncoding.FAST_DIFF,
      BloomType.NONE);
    stdout.println("done");
  }

  private static KeyValue kv(String row, String qualifier, long ts, KeyValue.Type type,
    String value, long seqId, Tag... tags) {
    KeyValue cell = new KeyValue(Bytes.toBytes(row), F, Bytes.toBytes(qualifier), ts, type,
      Bytes.toBytes(value), Arrays.asList(tags));
    cell.setSequenceId(seqId);
    return cell;
  }

  private static List<KeyValue> small() {
    List<KeyValue> cells = new ArrayList<>();
    cells.add(kv("row1", "a", T0 + 2, KeyValue.Type.Put, "v2", 12));
    cells.add(kv("row1", "a", T0 + 1, KeyValue.Type.Put, "v1", 11));
    cells.add(kv("row1", "", T0, KeyValue.Type.Put, "", 10));
    cells.add(kv("row1", "ttl", T0, KeyValue.Type.Put, "x", 13,
      new Tag((byte) 8, Bytes.toBytes(60000L))));
    cells.add(kv("row1", "two-tags", T0, KeyValue.Type.Put, "y", 14,
      new Tag((byte) 7, Bytes.toBytes("vis")), new Tag((byte) 64, new byte[] { 0, (byte) 0xff })));
    cells.add(kv("row2", "", T0 + 5, KeyValue.Type.DeleteFamily, "", 20));
    cells.add(kv("row2", "", T0 + 4, KeyValue.Type.DeleteFamilyVersion, "", 21));
    cells.add(kv("row2", "b", T0 + 3, KeyValue.Type.DeleteColumn, "", 22));
    cells.add(kv("row2", "c", T0 + 2, KeyValue.Type.Delete, "", 23));
    cells.add(kv("row2", "c", T0 + 1, KeyValue.Type.Put, "old", 0));
    KeyValue binary = new KeyValue(new byte[] { 0, (byte) 0x80, (byte) 0xff }, F,
      new byte[] { 1, 2 }, T0, KeyValue.Type.Put, new byte[] { (byte) 0xfe, 0, 10 });
    binary.setSequenceId(300);
    cells.add(binary);
    cells.sort(KeyValue.COMPARATOR);
    return cells;
  }

  private static List<KeyValue> many() {
    List<KeyValue> cells = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      String row = String.format("r%05d", i);
      Tag[] tags = i % 7 == 0 ? new Tag[] { new Tag((byte) 8, Bytes.toBytes(1000L + i)) }
        : new Tag[0];
      cells.add(kv(row, "q", T0 + i, KeyValue.Type.Put, "value-" + i, 1000 + i, tags));
      if (i % 50 == 0) {
        cells.add(kv(row, "q", T0 + i - 1, KeyValue.Type.Delete, "", 5000 + i));
      }
    }
    cells.sort(KeyValue.COMPARATOR);
    return cells;
  }

  private static void write(Configuration conf, FileSystem fs, java.nio.file.Path out,
    String name, List<KeyValue> cells, int blockSize, Compression.Algorithm compression,
    DataBlockEncoding encoding, BloomType bloom) throws Exception {
    write(conf, fs, out, name, cells, blockSize, compression, encoding, bloom,
      ChecksumType.CRC32C, 16384, false);
  }

  private static void write(Configuration conf, FileSystem fs, java.nio.file.Path out,
    String name, List<KeyValue> cells, int blockSize, Compression.Algorithm compression,
    DataBlockEncoding encoding, BloomType bloom, ChecksumType checksum, int bytesPerChecksum,
    boolean compressTags) throws Exception {
    Path path = new Path(out.resolve(name).toUri());
    HFileContext context = new HFileContextBuilder().withBlockSize(blockSize)
      .withIncludesMvcc(true).withIncludesTags(true).withCompressTags(compressTags)
      .withCompression(compression).withDataBlockEncoding(encoding).withChecksumType(checksum)
      .withBytesPerCheckSum(bytesPerChecksum).withCreateTime(T0).build();
    StoreFile.Writer writer = new StoreFile.WriterBuilder(conf, new CacheConfig(conf), fs)
      .withFilePath(path).withFileContext(context).withBloomType(bloom)
      .withComparator(KeyValue.COMPARATOR).withMaxKeyCount(cells.size()).build();
    long maxSeqId = 0;
    for (KeyValue cell : cells) {
      writer.append(cell);
      maxSeqId = Math.max(maxSeqId, cell.getSequenceId());
    }
    writer.appendMetadata(maxSeqId, false);
    writer.close();
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream printed = new PrintStream(buffer, true, "UTF-8");
    HFilePrettyPrinter printer = new HFilePrettyPrinter(conf);
    printer.setPrintStreams(printed, printed);
    int code = printer.run(new String[] { "-p", "-v", "-m", "-f", path.toString() });
    if (code != 0) {
      throw new IllegalStateException("HFilePrettyPrinter failed on " + name + ": " + buffer);
    }
    Files.write(out.resolve(name + ".hbase.txt"), buffer.toByteArray());
  }
}
