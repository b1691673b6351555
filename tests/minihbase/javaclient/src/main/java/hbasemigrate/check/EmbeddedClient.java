package hbasemigrate.check;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's client against a cluster found through ZooKeeper: {@code write} creates a table
 * with split keys, writes puts one by one and in a batch, deletes a version, a column, a
 * family and a whole row, then prints what a scan, a raw scan, a time-range scan and gets
 * read, gets one by one and in a batch, a scan through a stop row and two existence checks
 * ({@code CELL <what> row family qualifier timestamp type value}, bytes in hex;
 * {@code EXISTS <h> <zz>});
 * {@code move} scans it two rows a call and, after the first row, has the cluster's admin
 * endpoint move the first region to another server, then puts and gets a row of that
 * region ({@code ROW <row>}, {@code MOVED <reply>}, {@code AFTER <value>});
 * {@code drop} disables and deletes it, printing the table's state on the way;
 * {@code everyday} creates the table, counts ({@code COUNTER <value>}), increments two
 * columns and appends twice ({@code CELL increment|append ...}), puts a row, flushes the
 * table ({@code FLUSHED}), lists the tables ({@code TABLE <name>}), puts if a value is
 * there ({@code CHECKED}, or {@code REFUSED <class>}), then disables and deletes it.
 * Arguments: quorum host:port, znode parent, table, write|move|drop|everyday [admin URL].
 */
public final class EmbeddedClient {
  private static final byte[] F = Bytes.toBytes("f");

  private EmbeddedClient() {
  }

  public static void main(String[] args) throws Exception {
    TableName name = TableName.valueOf(args[2]);
    try (Connection conn = Clients.connect(args[0], args[1]);
        Admin admin = conn.getAdmin()) {
      if (args[3].equals("write")) {
        write(conn, admin, name);
      } else if (args[3].equals("move")) {
        move(conn, admin, name, args[4]);
      } else if (args[3].equals("everyday")) {
        everyday(conn, admin, name);
      } else {
        admin.disableTable(name);
        System.out.println("STATE disabled " + admin.isTableDisabled(name));
        admin.deleteTable(name);
        System.out.println("STATE exists " + admin.tableExists(name));
      }
    }
  }

  private static byte[] b(String text) {
    return Bytes.toBytes(text);
  }

  private static void write(Connection conn, Admin admin, TableName name) throws Exception {
    admin.createTable(TableDescriptorBuilder.newBuilder(name)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(10).build())
        .build(), new byte[][] {b("g"), b("p")});
    System.out.println("STATE exists " + admin.tableExists(name));
    System.out.println("STATE regions " + admin.getRegions(name).size());
    try (Table table = conn.getTable(name)) {
      table.put(new Put(b("a")).addColumn(F, b("q"), 100, b("one")));
      List<Put> puts = new ArrayList<>();
      for (String row : new String[] {"a", "h", "m", "q", "z"}) {
        for (long ts = 101; ts <= 103; ts++) {
          puts.add(new Put(b(row)).addColumn(F, b("q"), ts, b(row + ts))
              .addColumn(F, b("r"), ts, b("r" + ts)));
        }
      }
      table.put(puts);
      table.delete(new Delete(b("h")).addColumn(F, b("q"), 102));
      table.delete(new Delete(b("m")).addColumns(F, b("r"), 102));
      table.delete(new Delete(b("q")).addFamily(F, 101));
      table.delete(new Delete(b("z")));
      print(table, "scan", new Scan().readAllVersions());
      print(table, "raw", new Scan().setRaw(true).readAllVersions());
      print(table, "range", new Scan().readAllVersions().setTimeRange(101, 103));
      List<Get> gets = new ArrayList<>();
      for (String row : new String[] {"a", "h", "m", "q", "z"}) {
        show("get", table.get(new Get(b(row)).readAllVersions()));
        gets.add(new Get(b(row)).readAllVersions());
      }
      for (Result result : table.get(gets)) {
        show("batch", result);
      }
      print(table, "through", new Scan().withStopRow(b("m"), true));
      System.out.println("EXISTS " + table.exists(new Get(b("h"))) + " "
          + table.exists(new Get(b("zz"))));
    }
  }

  private static void move(Connection conn, Admin admin, TableName name, String adminUrl)
      throws Exception {
    String region = admin.getRegions(name).get(0).getEncodedName();
    try (Table table = conn.getTable(name);
        ResultScanner scanner = table.getScanner(new Scan().setCaching(2))) {
      boolean moved = false;
      for (Result result : scanner) {
        System.out.println("ROW " + Bytes.toHex(result.getRow()));
        if (!moved) {
          HttpResponse<String> reply = HttpClient.newHttpClient().send(
              HttpRequest.newBuilder(URI.create(adminUrl + "/move"))
                  .POST(HttpRequest.BodyPublishers.ofString("{\"region\": \"" + region + "\"}"))
                  .build(), HttpResponse.BodyHandlers.ofString());
          System.out.println("MOVED " + reply.body());
          moved = true;
        }
      }
      table.put(new Put(b("a")).addColumn(F, b("q"), 200, b("after")));
      Result after = table.get(new Get(b("a")).addColumn(F, b("q")));
      System.out.println("AFTER " + Bytes.toString(after.getValue(F, b("q"))));
    }
  }

  private static void print(Table table, String what, Scan scan) throws Exception {
    try (ResultScanner scanner = table.getScanner(scan.setCaching(2))) {
      for (Result result : scanner) {
        show(what, result);
      }
    }
  }

  private static void everyday(Connection conn, Admin admin, TableName name) throws Exception {
    admin.createTable(TableDescriptorBuilder.newBuilder(name)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F)).build(), new byte[][] {b("m")});
    try (Table table = conn.getTable(name)) {
      System.out.println("COUNTER " + table.incrementColumnValue(b("c"), F, b("n"), 5));
      System.out.println("COUNTER " + table.incrementColumnValue(b("c"), F, b("n"), -7));
      show("increment", table.increment(
          new Increment(b("x")).addColumn(F, b("b"), 2).addColumn(F, b("a"), 1)));
      show("append", table.append(new Append(b("c")).addColumn(F, b("s"), b("ab"))));
      show("append", table.append(new Append(b("c")).addColumn(F, b("s"), b("cd"))));
      table.put(new Put(b("y")).addColumn(F, b("q"), 1, b("v")));
      admin.flush(name);
      System.out.println("FLUSHED");
      for (TableName listed : admin.listTableNames()) {
        System.out.println("TABLE " + listed.getNameAsString());
      }
      try {
        table.checkAndMutate(b("y"), F).qualifier(b("q")).ifEquals(b("v"))
            .thenPut(new Put(b("y")).addColumn(F, b("q"), 2, b("w")));
        System.out.println("CHECKED");
      } catch (IOException e) {
        System.out.println("REFUSED " + e.getClass().getName());
      }
    }
    admin.disableTable(name);
    admin.deleteTable(name);
  }

  private static void show(String what, Result result) {
    for (Cell c : result.rawCells()) {
      System.out.println(String.join(" ", "CELL", what,
          Bytes.toHex(c.getRowArray(), c.getRowOffset(), c.getRowLength()),
          Bytes.toHex(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength()),
          "x" + Bytes.toHex(c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength()),
          Long.toString(c.getTimestamp()), Integer.toString(c.getTypeByte()),
          "x" + Bytes.toHex(c.getValueArray(), c.getValueOffset(), c.getValueLength())));
    }
  }
}
