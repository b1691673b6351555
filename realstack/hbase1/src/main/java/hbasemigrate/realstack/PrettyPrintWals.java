package hbasemigrate.realstack;

import com.google.gson.Gson;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALFactory;
import org.apache.hadoop.hbase.wal.WALPrettyPrinter;

/**
 * HBase 1.x's own WALPrettyPrinter in JSON mode with values (-j -p) over each file given: one
 * line per file on stdout, {"error"?: what it threw, "file": name, "output": what it printed,
 * "reads": [{"types", "end"}, ...]}. The 1.x printer does not print a cell's type (2.x's
 * does), and 1.2's not the position after an entry: "reads" has both for each printed entry,
 * from HBase's own WAL reader (WALFactory), entry by entry as the printer reads them
 * (entries without cells are not printed). Logs go to stderr.
 *
 * <p>With --cells first, each read also holds the entry's key and cells as HBase's reader (and
 * the file's cell codec) gives them: Apache Phoenix's IndexedKeyValue, which 1.x's printer
 * cannot print (its timestamp and type lie outside its bytes), as its index table and the
 * cells of its mutation, read through Phoenix's own accessors.
 */
public final class PrettyPrintWals {
  private PrettyPrintWals() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    Configuration conf = HBaseConfiguration.create();
    Gson gson = new Gson();
    boolean cells = args.length > 0 && args[0].equals("--cells");
    for (String name : java.util.Arrays.copyOfRange(args, cells ? 1 : 0, args.length)) {
      Path file = new Path(new File(name).toURI());
      ByteArrayOutputStream buffer = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
      // The no-argument constructor prints to System.out as it is then; its others differ
      // between 1.x releases (1.7 has 2.x's).
      System.setOut(out);
      WALPrettyPrinter printer = new WALPrettyPrinter();
      System.setOut(System.err);
      printer.enableValues();
      printer.enableJSON();
      Map<String, Object> line = new LinkedHashMap<>();
      try {
        printer.processFile(conf, file);
        line.put("reads", reads(conf, file, cells));
      } catch (Exception e) {
        line.put("error", e.toString());
      }
      if (cells && !line.containsKey("reads")) {
        // what the printer could not print (a Phoenix IndexedKeyValue, say), still read
        try {
          line.put("reads", reads(conf, file, true));
        } catch (Exception e) {
          line.put("reads_error", e.toString());
        }
      }
      out.flush();
      line.put("file", new File(name).getName());
      line.put("output", buffer.toString(StandardCharsets.UTF_8));
      stdout.println(gson.toJson(line));
    }
    stdout.flush();
  }

  private static List<Map<String, Object>> reads(Configuration conf, Path file, boolean cells)
      throws Exception {
    List<Map<String, Object>> found = new ArrayList<>();
    FileSystem fs = file.getFileSystem(conf);
    WAL.Reader reader = WALFactory.createReader(fs, file, conf);
    try {
      for (WAL.Entry entry = reader.next(); entry != null; entry = reader.next()) {
        List<String> types = new ArrayList<>();
        List<Object> described = new ArrayList<>();
        for (Cell cell : entry.getEdit().getCells()) {
          boolean indexed = cell.getClass().getName().endsWith(".IndexedKeyValue");
          types.add(indexed ? "IndexedKeyValue"
              : KeyValue.Type.codeToType(cell.getTypeByte()).toString());
          if (cells) {
            described.add(indexed ? indexed(cell) : cell(cell));
          }
        }
        if (!types.isEmpty()) {
          Map<String, Object> read = new LinkedHashMap<>();
          read.put("types", types);
          read.put("end", reader.getPosition());
          if (cells) {
            read.put("sequence", entry.getKey().getLogSeqNum());
            read.put("region", Bytes.toString(entry.getKey().getEncodedRegionName()));
            read.put("table", entry.getKey().getTablename().getNameAsString());
            read.put("cells", described);
          }
          found.add(read);
        }
      }
    } finally {
      reader.close();
    }
    return found;
  }

  private static Map<String, Object> cell(Cell cell) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("row", Bytes.toStringBinary(CellUtil.cloneRow(cell)));
    out.put("family", Bytes.toStringBinary(CellUtil.cloneFamily(cell)));
    out.put("qualifier", Bytes.toStringBinary(CellUtil.cloneQualifier(cell)));
    out.put("timestamp", cell.getTimestamp());
    out.put("type", KeyValue.Type.codeToType(cell.getTypeByte()).toString());
    out.put("value", Bytes.toStringBinary(CellUtil.cloneValue(cell)));
    List<String> tags = new ArrayList<>();
    for (Tag tag : Tag.asList(cell.getTagsArray(), cell.getTagsOffset(), cell.getTagsLength())) {
      tags.add(tag.getType() + ":" + Bytes.toStringBinary(tag.getValue()));
    }
    out.put("tags", tags);
    return out;
  }

  /** Phoenix's IndexedKeyValue: getIndexTable() and getMutation(), by reflection. */
  private static Map<String, Object> indexed(Cell cell) throws Exception {
    byte[] table = (byte[]) cell.getClass().getMethod("getIndexTable").invoke(cell);
    Mutation mutation = (Mutation) cell.getClass().getMethod("getMutation").invoke(cell);
    List<Object> cells = new ArrayList<>();
    for (List<Cell> family : mutation.getFamilyCellMap().values()) {
      for (Cell inner : family) {
        cells.add(cell(inner));
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("index_table", Bytes.toStringBinary(table));
    out.put("row", Bytes.toStringBinary(mutation.getRow()));
    out.put("mutation", mutation.getClass().getSimpleName());
    out.put("cells", cells);
    return out;
  }
}
