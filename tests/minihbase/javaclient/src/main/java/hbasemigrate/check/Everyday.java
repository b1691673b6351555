package hbasemigrate.check;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.AsyncConnection;
import org.apache.hadoop.hbase.client.AsyncTable;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * A typical application's writes and reads by HBase's own client: puts through a
 * BufferedMutator, deletes of each type (a version, a column, a family, a family version, a
 * whole row), increments, appends, checkAndMutate, a batch, the AsyncTable's put, get and
 * scan, a table flush and a truncate keeping the split points. One line per outcome
 * ({@code <what> <value>}, cells as {@code family:qualifier/timestamp=value}); the table is
 * deleted at the end. Arguments: quorum host:port, znode parent, table.
 */
public final class Everyday {
  private static final byte[] F = Bytes.toBytes("f");

  private Everyday() {
  }

  public static void main(String[] args) throws Exception {
    TableName name = TableName.valueOf(args[2]);
    try (Connection conn = Clients.connect(args[0], args[1]);
        Admin admin = conn.getAdmin()) {
      Clients.create(admin, name, b("m"),
          ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(3).build());
      try (Table table = conn.getTable(name)) {
        deletes(conn, name, table);
        deltas(table);
        try (AsyncConnection async = ConnectionFactory.createAsyncConnection(
            Clients.configuration(args[0], args[1])).get()) {
          asyncCalls(async.getTable(name));
        }
        admin.flush(name);
        System.out.println("flushed " + table.get(new Get(b("x"))).size());
        admin.disableTable(name);
        admin.truncateTable(name, true);
        System.out.println("truncated " + admin.getRegions(name).size() + " "
            + table.getScanner(new Scan()).next());
      }
      admin.disableTable(name);
      admin.deleteTable(name);
    }
  }

  private static byte[] b(String text) {
    return Bytes.toBytes(text);
  }

  private static String cells(Result result) {
    List<String> out = new ArrayList<>();
    for (Cell cell : result.rawCells()) {
      out.add(Bytes.toString(CellUtil.cloneFamily(cell)) + ":"
          + Bytes.toString(CellUtil.cloneQualifier(cell)) + "/" + cell.getTimestamp() + "="
          + Bytes.toStringBinary(CellUtil.cloneValue(cell)));
    }
    return String.join(",", out);
  }

  private static void deletes(Connection conn, TableName name, Table table) throws Exception {
    try (BufferedMutator mutator = conn.getBufferedMutator(name)) {
      for (String row : new String[] {"r1", "r2", "r3", "r4", "r5"}) {
        mutator.mutate(new Put(b(row)).addColumn(F, b("a"), 1, b("v1"))
            .addColumn(F, b("a"), 2, b("v2")).addColumn(F, b("b"), 1, b("x")));
      }
    }
    table.delete(new Delete(b("r1")).addColumn(F, b("a"), 2));
    table.delete(new Delete(b("r2")).addColumns(F, b("a")));
    table.delete(new Delete(b("r3")).addFamily(F));
    table.delete(new Delete(b("r4")));
    table.delete(new Delete(b("r5")).addFamilyVersion(F, 1));
    for (String row : new String[] {"r1", "r2", "r3", "r4", "r5"}) {
      System.out.println("deleted " + row + " " + cells(table.get(new Get(b(row)).readAllVersions())));
    }
  }

  private static void deltas(Table table) throws Exception {
    Result counted = table.increment(new Increment(b("c")).addColumn(F, b("n"), 5));
    System.out.println("increment " + Bytes.toLong(counted.getValue(F, b("n"))));
    counted = table.increment(new Increment(b("c")).addColumn(F, b("n"), 3));
    System.out.println("increment " + Bytes.toLong(counted.getValue(F, b("n"))));
    table.append(new Append(b("c")).addColumn(F, b("s"), b("ab")));
    Result appended = table.append(new Append(b("c")).addColumn(F, b("s"), b("cd")));
    System.out.println("append " + Bytes.toString(appended.getValue(F, b("s"))));
    Put ok = new Put(b("c")).addColumn(F, b("ok"), 7, b("yes"));
    System.out.println("check_equal " + table.checkAndMutate(CheckAndMutate.newBuilder(b("c"))
        .ifEquals(F, b("s"), b("abcd")).build(ok)).isSuccess());
    System.out.println("check_other " + table.checkAndMutate(CheckAndMutate.newBuilder(b("c"))
        .ifEquals(F, b("s"), b("zz")).build(ok)).isSuccess());
    System.out.println("check_missing " + table.checkAndMutate(CheckAndMutate.newBuilder(b("c"))
        .ifNotExists(F, b("none")).build(new Delete(b("c")).addColumns(F, b("ok")))).isSuccess());
    Put marked = new Put(b("c")).addColumn(F, b("fm"), 8, b("y"));
    System.out.println("check_filter " + table.checkAndMutate(CheckAndMutate.newBuilder(b("c"))
        .ifMatches(new SingleColumnValueFilter(F, b("s"), CompareOperator.EQUAL, b("abcd")))
        .build(marked)).isSuccess());
    System.out.println("check_filter_other " + table.checkAndMutate(CheckAndMutate
        .newBuilder(b("c")).ifMatches(new ValueFilter(CompareOperator.EQUAL,
        new BinaryComparator(b("nope")))).build(marked)).isSuccess());
    System.out.println("marked " + cells(table.get(new Get(b("c")).addColumn(F, b("fm")))));
    List<Row> batch = Arrays.asList(new Put(b("d1")).addColumn(F, b("a"), 3, b("d")),
        new Get(b("r5")));
    Object[] results = new Object[batch.size()];
    table.batch(batch, results);
    System.out.println("batch " + ((Result) results[0]).isEmpty() + " "
        + cells((Result) results[1]));
  }

  private static void asyncCalls(AsyncTable<?> table) throws Exception {
    table.put(new Put(b("x")).addColumn(F, b("a"), 4, b("async"))).get();
    System.out.println("async_get " + cells(table.get(new Get(b("x"))).get()));
    List<String> rows = new ArrayList<>();
    for (Result result : table.scanAll(new Scan().setFilter(new PrefixFilter(b("r")))).get()) {
      rows.add(Bytes.toString(result.getRow()));
    }
    System.out.println("async_scan " + String.join(",", rows));
  }
}
