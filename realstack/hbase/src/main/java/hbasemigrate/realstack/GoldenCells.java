package hbasemigrate.realstack;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.ChecksumType;

/**
 * What the golden HFiles hold and how each is written, the same for every HBase release:
 * the hbase module's file, linked from the hbase1 module. Each module's WriteGoldenHFiles
 * turns the cells into its release's KeyValues and writes them with its release's writer
 * ({@link Writer}); {@link #writeAll} names the files and prints each with HFilePrettyPrinter
 * (-p -v -m), whose API both lines share.
 */
final class GoldenCells {
  static final byte[] F = Bytes.toBytes("f");
  static final long T0 = 1700000000000L;

  private GoldenCells() {
  }

  /** One cell; tags as parallel arrays of types and values. */
  static final class Cell {
    final byte[] row;
    final byte[] qualifier;
    final long ts;
    final KeyValue.Type type;
    final byte[] value;
    final long seqId;
    final byte[] tagTypes;
    final byte[][] tagValues;

    Cell(byte[] row, byte[] qualifier, long ts, KeyValue.Type type, byte[] value, long seqId,
      byte[] tagTypes, byte[]... tagValues) {
      this.row = row;
      this.qualifier = qualifier;
      this.ts = ts;
      this.type = type;
      this.value = value;
      this.seqId = seqId;
      this.tagTypes = tagTypes;
      this.tagValues = tagValues;
    }
  }

  /** One file: its cells and the settings of its writer. */
  static final class Spec {
    final String name;
    final List<Cell> cells;
    final int blockSize;
    final Compression.Algorithm compression;
    final DataBlockEncoding encoding;
    final BloomType bloom;
    final ChecksumType checksum;
    final int bytesPerChecksum;
    final boolean compressTags;

    Spec(String name, List<Cell> cells, int blockSize, Compression.Algorithm compression,
      DataBlockEncoding encoding, BloomType bloom, ChecksumType checksum, int bytesPerChecksum,
      boolean compressTags) {
      this.name = name;
      this.cells = cells;
      this.blockSize = blockSize;
      this.compression = compression;
      this.encoding = encoding;
      this.bloom = bloom;
      this.checksum = checksum;
      this.bytesPerChecksum = bytesPerChecksum;
      this.compressTags = compressTags;
    }
  }

  /** A release's way to write one file. */
  interface Writer {
    void write(Configuration conf, Path path, Spec spec) throws Exception;
  }

  /** A release's tag (an interface from 2.0, a class before). */
  interface Tags {
    Tag make(byte type, byte[] value);
  }

  /** A release's store file writer taking one cell. */
  interface Appender {
    void append(KeyValue cell) throws IOException;
  }

  /** The program: write every file into args[0] with {@code writer}; "done" on stdout. */
  static void run(String[] args, Configuration conf, Writer writer) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    java.nio.file.Path out = java.nio.file.Paths.get(args[0]).toAbsolutePath();
    Files.createDirectories(out);
    conf.set("hbase.rootdir", out.toUri().toString()); // 1.x's printer reads files under it only
    writeAll(conf, out, writer);
    stdout.println("done");
  }

  /** The file's context as every release builds it (a 2.x writer adds family and table). */
  static HFileContextBuilder context(Spec spec) {
    return new HFileContextBuilder().withBlockSize(spec.blockSize).withIncludesMvcc(true)
      .withIncludesTags(true).withCompressTags(spec.compressTags)
      .withCompression(spec.compression).withDataBlockEncoding(spec.encoding)
      .withChecksumType(spec.checksum).withBytesPerCheckSum(spec.bytesPerChecksum)
      .withCreateTime(T0);
  }

  /** The cells as the release's KeyValues, in {@code order}. */
  static List<KeyValue> keyValues(List<Cell> cells, Tags tags,
    Comparator<? super KeyValue> order) {
    List<KeyValue> out = new ArrayList<>();
    for (Cell c : cells) {
      List<Tag> made = new ArrayList<>();
      for (int i = 0; i < c.tagTypes.length; i++) {
        made.add(tags.make(c.tagTypes[i], c.tagValues[i]));
      }
      KeyValue cell = new KeyValue(c.row, F, c.qualifier, c.ts, c.type, c.value, made);
      cell.setSequenceId(c.seqId);
      out.add(cell);
    }
    out.sort(order);
    return out;
  }

  /** Append every cell; the largest sequence id, for the file's MAX_SEQ_ID_KEY. */
  static long appendAll(List<KeyValue> cells, Appender writer) throws IOException {
    long maxSeqId = 0;
    for (KeyValue cell : cells) {
      writer.append(cell);
      maxSeqId = Math.max(maxSeqId, cell.getSequenceId());
    }
    return maxSeqId;
  }

  private static Cell put(String row, String qualifier, long ts, KeyValue.Type type, String value,
    long seqId) {
    return new Cell(Bytes.toBytes(row), Bytes.toBytes(qualifier), ts, type, Bytes.toBytes(value),
      seqId, new byte[0]);
  }

  /** Puts with binary bytes, an empty qualifier and value, tags, and every delete type. */
  static List<Cell> small() {
    List<Cell> cells = new ArrayList<>();
    cells.add(put("row1", "a", T0 + 2, KeyValue.Type.Put, "v2", 12));
    cells.add(put("row1", "a", T0 + 1, KeyValue.Type.Put, "v1", 11));
    cells.add(put("row1", "", T0, KeyValue.Type.Put, "", 10));
    cells.add(new Cell(Bytes.toBytes("row1"), Bytes.toBytes("ttl"), T0, KeyValue.Type.Put,
      Bytes.toBytes("x"), 13, new byte[] { 8 }, Bytes.toBytes(60000L)));
    cells.add(new Cell(Bytes.toBytes("row1"), Bytes.toBytes("two-tags"), T0, KeyValue.Type.Put,
      Bytes.toBytes("y"), 14, new byte[] { 7, 64 }, Bytes.toBytes("vis"),
      new byte[] { 0, (byte) 0xff }));
    cells.add(put("row2", "", T0 + 5, KeyValue.Type.DeleteFamily, "", 20));
    cells.add(put("row2", "", T0 + 4, KeyValue.Type.DeleteFamilyVersion, "", 21));
    cells.add(put("row2", "b", T0 + 3, KeyValue.Type.DeleteColumn, "", 22));
    cells.add(put("row2", "c", T0 + 2, KeyValue.Type.Delete, "", 23));
    cells.add(put("row2", "c", T0 + 1, KeyValue.Type.Put, "old", 0));
    cells.add(new Cell(new byte[] { 0, (byte) 0x80, (byte) 0xff }, new byte[] { 1, 2 }, T0,
      KeyValue.Type.Put, new byte[] { (byte) 0xfe, 0, 10 }, 300, new byte[0]));
    return cells;
  }

  /** Enough cells for many 512-byte blocks, some with a tag. */
  static List<Cell> many() {
    List<Cell> cells = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      byte[] row = Bytes.toBytes(String.format("r%05d", i));
      byte[] types = i % 7 == 0 ? new byte[] { 8 } : new byte[0];
      byte[][] values = i % 7 == 0 ? new byte[][] { Bytes.toBytes(1000L + i) } : new byte[0][];
      cells.add(new Cell(row, Bytes.toBytes("q"), T0 + i, KeyValue.Type.Put,
        Bytes.toBytes("value-" + i), 1000 + i, types, values));
      if (i % 50 == 0) {
        cells.add(new Cell(row, Bytes.toBytes("q"), T0 + i - 1, KeyValue.Type.Delete, new byte[0],
          5000 + i, new byte[0]));
      }
    }
    return cells;
  }

  // tag types of HBase's own features (TagType)
  static final byte ACL = 1;
  static final byte VISIBILITY = 2;
  static final byte VISIBILITY_FORMAT = 4;
  static final byte MOB_REFERENCE = 5;
  static final byte MOB_TABLE_NAME = 6;
  static final byte TTL = 8;

  /**
   * A cell ACL's tag value as the AccessController writes it for a Put's setACL(user, READ):
   * AccessControlProtos.UsersAndPermissions { user_permissions { user; permissions { type
   * Global; global_permission { action READ } } } }, encoded here field by field (the bytes
   * 2.6.1's AccessControlUtil.toUsersAndPermissions(user, READ) makes; 1.x's classes differ).
   */
  static byte[] aclValue(String user) {
    byte[] name = Bytes.toBytes(user);
    byte[] permission = { 0x08, 0x01, 0x12, 0x02, 0x08, 0x00 };
    byte[] userPermissions = Bytes.add(new byte[] { 0x0a, (byte) name.length }, name,
      Bytes.add(new byte[] { 0x12, (byte) permission.length }, permission));
    return Bytes.add(new byte[] { 0x0a, (byte) userPermissions.length }, userPermissions);
  }

  /**
   * Cells with the tags HBase's features attach, many per block: a cell TTL on every row
   * (the tag a region server makes of Put.setTTL: type 8, the TTL in ms as a long), distinct
   * from row to row so that a 64 KiB block holds more distinct tags than the 127 slots of
   * the tag dictionary; a cell ACL (type 1) with visibility labels (the serialization
   * format tag, type 4, then the label ordinals as vints, type 2, a negative one for NOT)
   * on every third row, of two users; a MOB reference cell (value: the MOB value's length,
   * then its file's name; tags: the reference tag, type 5, empty, and the table name, type
   * 6) on every fourth; a cell with no tag on every fifth.
   */
  static List<Cell> tagged() {
    List<Cell> cells = new ArrayList<>();
    long seqId = 3000;
    for (int i = 0; i < 400; i++) {
      byte[] row = Bytes.toBytes(String.format("t%05d", i));
      cells.add(new Cell(row, Bytes.toBytes("ttl"), T0 + i, KeyValue.Type.Put,
        Bytes.toBytes("ttl-" + i), seqId++, new byte[] { TTL }, Bytes.toBytes(60000L + i)));
      if (i % 3 == 0) {
        byte[] labels = i % 2 == 0 ? new byte[] { 1, 3 } : new byte[] { 2, (byte) 0xfe };
        cells.add(new Cell(row, Bytes.toBytes("acl"), T0 + i, KeyValue.Type.Put,
          Bytes.toBytes("secret-" + i), seqId++, new byte[] { ACL, VISIBILITY_FORMAT, VISIBILITY },
          aclValue(i % 2 == 0 ? "alice" : "bob"), new byte[] { 1 }, labels));
      }
      if (i % 4 == 0) {
        byte[] file = Bytes.toBytes(String.format("d41d8cd98f00b204e9800998ecf8427e2023111%d"
          + "5f3c0a1b2c3d4e5f60718293a4b5c6d7e8f%02d", i % 10, i % 7));
        cells.add(new Cell(row, Bytes.toBytes("mob"), T0 + i, KeyValue.Type.Put,
          Bytes.add(Bytes.toBytes(100000 + i), file), seqId++,
          new byte[] { MOB_REFERENCE, MOB_TABLE_NAME }, new byte[0], Bytes.toBytes("golden")));
      }
      if (i % 5 == 0) {
        cells.add(new Cell(row, Bytes.toBytes("plain"), T0 + i, KeyValue.Type.Put,
          Bytes.toBytes("p" + i), seqId++, new byte[0]));
      }
    }
    return cells;
  }

  /** A file of tagged cells, its tags compressed as a family's COMPRESS_TAGS default has it. */
  private static Spec tagSpec(String name, int blockSize, Compression.Algorithm compression,
    DataBlockEncoding encoding) {
    return new Spec(name, tagged(), blockSize, compression, encoding, BloomType.NONE,
      ChecksumType.CRC32C, 16384, true);
  }

  private static Spec spec(String name, List<Cell> cells, int blockSize,
    Compression.Algorithm compression, DataBlockEncoding encoding, BloomType bloom) {
    return new Spec(name, cells, blockSize, compression, encoding, bloom, ChecksumType.CRC32C,
      16384, false);
  }

  /**
   * Every golden file written into {@code out} by {@code writer}, and printed beside it. A
   * codec the release cannot load here (no codec module on Maven Central, or SNAPPY and LZ4
   * without Hadoop's native library), or does not have (ZSTD, BROTLI in 1.x), is skipped.
   */
  static void writeAll(Configuration conf, java.nio.file.Path out, Writer writer)
    throws Exception {
    Compression.Algorithm none = Compression.Algorithm.NONE;
    Compression.Algorithm gz = Compression.Algorithm.GZ;
    conf.setInt("hfile.index.block.max.size", 256); // leaf index blocks: a multi-level index
    write(conf, out, writer, spec("small", small(), 65536, none, DataBlockEncoding.NONE,
      BloomType.NONE));
    // CRC32 in chunks of 512 bytes: several checksums per block
    write(conf, out, writer, new Spec("multiblock-crc32", many(), 4096, gz,
      DataBlockEncoding.NONE, BloomType.NONE, ChecksumType.CRC32, 512, false));
    write(conf, out, writer, spec("multiblock", many(), 512, none, DataBlockEncoding.NONE,
      BloomType.ROW));
    write(conf, out, writer, spec("multiblock-gz", many(), 512, gz, DataBlockEncoding.NONE,
      BloomType.ROW));
    Configuration deep = new Configuration(conf);
    deep.setInt("hfile.index.block.max.size", 128); // index chunks of ~3 entries: 3 levels
    deep.setInt("hfile.index.block.min.entries", 2);
    write(deep, out, writer, spec("multiblock-3level", many(), 512, none,
      DataBlockEncoding.NONE, BloomType.NONE));
    for (String name : new String[] { "SNAPPY", "LZ4", "ZSTD", "BROTLI" }) {
      Compression.Algorithm codec = loadable(name);
      if (codec != null) {
        write(conf, out, writer, spec("multiblock-" + codec.getName(), many(), 2048, codec,
          DataBlockEncoding.NONE, BloomType.NONE));
      }
    }
    write(conf, out, writer, spec("multiblock-rowindex", many(), 512, none,
      DataBlockEncoding.ROW_INDEX_V1, BloomType.NONE));
    write(conf, out, writer, spec("small-rowindex", small(), 65536, none,
      DataBlockEncoding.ROW_INDEX_V1, BloomType.NONE));
    write(conf, out, writer, spec("multiblock-prefix", many(), 512, none,
      DataBlockEncoding.PREFIX, BloomType.NONE));
    write(conf, out, writer, spec("small-prefix", small(), 65536, none, DataBlockEncoding.PREFIX,
      BloomType.NONE));
    write(conf, out, writer, spec("multiblock-fastdiff", many(), 512, gz,
      DataBlockEncoding.FAST_DIFF, BloomType.NONE));
    write(conf, out, writer, spec("small-diff", small(), 65536, none, DataBlockEncoding.DIFF,
      BloomType.NONE));
    write(conf, out, writer, spec("multiblock-diff", many(), 512, none, DataBlockEncoding.DIFF,
      BloomType.NONE));
    write(conf, out, writer, new Spec("small-tagcompression", small(), 65536, none,
      DataBlockEncoding.FAST_DIFF, BloomType.NONE, ChecksumType.CRC32C, 16384, true));
    write(conf, out, writer, spec("small-fastdiff", small(), 65536, none,
      DataBlockEncoding.FAST_DIFF, BloomType.NONE));
    // tagged cells with COMPRESS_TAGS in every encoding: one 64 KiB block (more distinct
    // tags than dictionary slots), and blocks of 1 KiB, GZ (the dictionary emptied at each)
    String[][] encodings = { { "", "NONE" }, { "-prefix", "PREFIX" }, { "-diff", "DIFF" },
      { "-fastdiff", "FAST_DIFF" }, { "-rowindex", "ROW_INDEX_V1" } };
    for (String[] e : encodings) {
      DataBlockEncoding encoding = DataBlockEncoding.valueOf(e[1]);
      write(conf, out, writer, tagSpec("tagged" + e[0], 65536, none, encoding));
      write(conf, out, writer, tagSpec("tagged-multiblock" + e[0], 1024, gz, encoding));
    }
    for (String name : new String[] { "SNAPPY", "LZ4", "ZSTD", "BROTLI" }) {
      Compression.Algorithm codec = loadable(name);
      if (codec != null) {
        write(conf, out, writer, tagSpec("tagged-multiblock-fastdiff-" + codec.getName(), 2048,
          codec, DataBlockEncoding.FAST_DIFF));
      }
    }
  }

  /** The codec named, or null (said on stderr) when the release cannot load it here. */
  private static Compression.Algorithm loadable(String name) {
    try {
      Compression.Algorithm codec = Compression.Algorithm.valueOf(name);
      codec.returnCompressor(codec.getCompressor());
      return codec;
    } catch (RuntimeException | LinkageError e) {
      System.err.println("skipped " + name + ": " + e);
      return null;
    }
  }

  private static void write(Configuration conf, java.nio.file.Path out, Writer writer,
    Spec spec) throws Exception {
    Path path = new Path(out.resolve(spec.name).toUri());
    writer.write(conf, path, spec);
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    PrintStream printed = new PrintStream(buffer, true, "UTF-8");
    HFilePrettyPrinter printer = new HFilePrettyPrinter(conf);
    printer.setPrintStreams(printed, printed);
    int code = printer.run(new String[] { "-p", "-v", "-m", "-f", path.toString() });
    if (code != 0) {
      throw new IllegalStateException("HFilePrettyPrinter failed on " + spec.name + ": " + buffer);
    }
    Files.write(out.resolve(spec.name + ".hbase.txt"), buffer.toByteArray());
  }
}
