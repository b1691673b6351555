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
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
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
 */
public final class PrettyPrintWals {
  private PrettyPrintWals() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    Configuration conf = HBaseConfiguration.create();
    Gson gson = new Gson();
    for (String name : args) {
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
        line.put("reads", reads(conf, file));
      } catch (Exception e) {
        line.put("error", e.toString());
      }
      out.flush();
      line.put("file", new File(name).getName());
      line.put("output", buffer.toString(StandardCharsets.UTF_8));
      stdout.println(gson.toJson(line));
    }
    stdout.flush();
  }

  private static List<Map<String, Object>> reads(Configuration conf, Path file)
      throws Exception {
    List<Map<String, Object>> found = new ArrayList<>();
    FileSystem fs = file.getFileSystem(conf);
    WAL.Reader reader = WALFactory.createReader(fs, file, conf);
    try {
      for (WAL.Entry entry = reader.next(); entry != null; entry = reader.next()) {
        List<String> types = new ArrayList<>();
        for (Cell cell : entry.getEdit().getCells()) {
          types.add(KeyValue.Type.codeToType(cell.getTypeByte()).toString());
        }
        if (!types.isEmpty()) {
          Map<String, Object> read = new LinkedHashMap<>();
          read.put("types", types);
          read.put("end", reader.getPosition());
          found.add(read);
        }
      }
    } finally {
      reader.close();
    }
    return found;
  }
}
