import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter;

/**
 * HBase's HFilePrettyPrinter (-p -v -m -k) run on each file given, in one JVM: for each
 * FILE it writes OUT_DIR/NAME.hbase.txt, what the printer printed, and the printer's exit
 * code on stdout ("NAME CODE"). Args: OUT_DIR FILE... Run as a source file on the class path
 * of the stack's HBase (codecs as the stack's realstack-site.xml names them).
 */
public final class PrintHFiles {
  private PrintHFiles() {
  }

  public static void main(String[] args) throws Exception {
    PrintStream stdout = System.out;
    System.setOut(System.err);
    Configuration.addDefaultResource("realstack-site.xml");
    Configuration conf = HBaseConfiguration.create();
    Path out = Paths.get(args[0]);
    for (int i = 1; i < args.length; i++) {
      Path file = Paths.get(args[i]).toAbsolutePath();
      ByteArrayOutputStream buffer = new ByteArrayOutputStream();
      PrintStream printed = new PrintStream(buffer, true, "UTF-8");
      HFilePrettyPrinter printer = new HFilePrettyPrinter(conf);
      printer.setPrintStreams(printed, printed);
      int code = printer.run(new String[] { "-p", "-v", "-m", "-k", "-f", file.toUri().toString() });
      String name = file.getFileName().toString();
      Files.write(out.resolve(name + ".hbase.txt"), buffer.toByteArray());
      stdout.println(name + " " + code);
    }
    stdout.println("done");
  }
}
