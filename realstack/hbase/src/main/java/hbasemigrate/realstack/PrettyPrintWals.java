package hbasemigrate.realstack;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.wal.WALPrettyPrinter;
import org.apache.hbase.thirdparty.com.google.gson.Gson;

/**
 * HBase's own WALPrettyPrinter in JSON mode with values (-j -p) over each file given: one line
 * per file on stdout, {"error"?: what it threw, "file": name, "output": what it printed}; logs go to
 * stderr.
 */
public final class PrettyPrintWals {
  private PrettyPrintWals() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    Configuration.addDefaultResource(RealHBase.SITE);
    Configuration conf = HBaseConfiguration.create();
    Gson gson = new Gson();
    // --cells (the 1.x wrapper's reader view) is not needed here: 2.x's printer prints every
    // cell, Phoenix 5's index updates too
    boolean cells = args.length > 0 && args[0].equals("--cells");
    for (String file : java.util.Arrays.copyOfRange(args, cells ? 1 : 0, args.length)) {
      ByteArrayOutputStream buffer = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
      // The printer writes to the System.out of its making (3.x has no constructor taking a
      // stream, 2.x has both): values and JSON, every sequence id, table, region and row.
      System.setOut(out);
      WALPrettyPrinter printer = new WALPrettyPrinter();
      System.setOut(System.err);
      printer.enableValues();
      printer.enableJSON();
      Map<String, Object> line = new LinkedHashMap<>();
      try {
        printer.processFile(conf, new Path(new java.io.File(file).toURI()));
      } catch (Exception e) {
        line.put("error", e.toString());
      }
      out.flush();
      line.put("file", new java.io.File(file).getName());
      line.put("output", buffer.toString(StandardCharsets.UTF_8));
      stdout.println(gson.toJson(line));
    }
    stdout.flush();
  }
}
