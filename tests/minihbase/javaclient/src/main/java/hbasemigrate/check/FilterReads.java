package hbasemigrate.check;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.BinaryPrefixComparator;
import org.apache.hadoop.hbase.filter.ColumnCountGetFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.TimestampsFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Reads as everyday applications and the shell make them, with filters and a scan's limits,
 * by HBase's own client: creates {@code table} split at {@code m} (family {@code f} keeping
 * 3 versions, {@code g} one), writes a few cells with their own timestamps, prints what each
 * read returns, then disables and deletes the table. One line per Result:
 * {@code <read>: row/family:qualifier/timestamp=value; ...} (values as
 * {@code Bytes.toStringBinary}). Arguments: quorum host:port, znode parent, table.
 */
public final class FilterReads {
  private static final byte[] F = Bytes.toBytes("f");
  private static final byte[] G = Bytes.toBytes("g");

  private FilterReads() {
  }

  public static void main(String[] args) throws Exception {
    TableName name = TableName.valueOf(args[2]);
    try (Connection conn = Clients.connect(args[0], args[1]);
        Admin admin = conn.getAdmin()) {
      Clients.create(admin, name, b("m"),
          ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(3).build(),
          ColumnFamilyDescriptorBuilder.of(G));
      try (Table table = conn.getTable(name)) {
        write(table);
        reads(table);
      }
      admin.disableTable(name);
      admin.deleteTable(name);
    }
  }

  private static byte[] b(String text) {
    return Bytes.toBytes(text);
  }

  private static void put(List<Put> puts, String row, byte[] family, String qualifier,
      long ts, String value) {
    puts.add(new Put(b(row)).addColumn(family, b(qualifier), ts, b(value)));
  }

  private static void write(Table table) throws Exception {
    List<Put> puts = new ArrayList<>();
    put(puts, "a1", F, "q1", 10, "apple");
    put(puts, "a1", F, "q1", 20, "apricot");
    put(puts, "a1", F, "q2", 10, "10");
    put(puts, "a1", G, "x", 10, "gx");
    put(puts, "a2", F, "q1", 10, "banana");
    put(puts, "a2", F, "r1", 10, "cherry");
    put(puts, "b1", F, "q1", 10, "apple");
    put(puts, "b1", F, "q3", 10, "Date");
    put(puts, "m1", F, "q1", 10, "melon");
    put(puts, "m1", F, "q2", 10, "20");
    put(puts, "m1", G, "x", 10, "gm");
    put(puts, "m2", F, "r2", 10, "kiwi");
    put(puts, "n1", F, "q1", 30, "apple");
    put(puts, "n1", F, "q1", 40, "nut");
    put(puts, "z9", G, "x", 10, "gz");
    table.put(puts);
  }

  private static Scan filtered(Filter filter) {
    return new Scan().setFilter(filter);
  }

  private static SingleColumnValueFilter apple() {
    return new SingleColumnValueFilter(F, b("q1"), CompareOperator.EQUAL, b("apple"));
  }

  private static void reads(Table table) throws Exception {
    scan(table, "all", new Scan());
    scan(table, "prefix", filtered(new PrefixFilter(b("a"))));
    scan(table, "scvf", filtered(apple()));
    SingleColumnValueFilter missing = apple();
    missing.setFilterIfMissing(true);
    scan(table, "scvf_missing", filtered(missing));
    SingleColumnValueFilter versions = apple();
    versions.setFilterIfMissing(true);
    versions.setLatestVersionOnly(false);
    scan(table, "scvf_all_versions", filtered(versions));
    scan(table, "column_prefix", filtered(new ColumnPrefixFilter(b("q"))));
    scan(table, "first_key_only", filtered(new FirstKeyOnlyFilter()));
    scan(table, "key_only", filtered(new KeyOnlyFilter(true)).withStartRow(b("m1"))
        .withStopRow(b("m2")));
    scan(table, "page", filtered(new PageFilter(2)));
    scan(table, "row_regex", filtered(new RowFilter(CompareOperator.EQUAL,
        new RegexStringComparator("^[ab]\\d$"))));
    scan(table, "value_substring", filtered(new ValueFilter(CompareOperator.EQUAL,
        new SubstringComparator("AP"))));
    scan(table, "qualifier_prefix", filtered(new QualifierFilter(CompareOperator.EQUAL,
        new BinaryPrefixComparator(b("r")))));
    scan(table, "qualifier_less", filtered(new QualifierFilter(CompareOperator.LESS,
        new BinaryComparator(b("q2")))));
    scan(table, "list_or", filtered(new FilterList(FilterList.Operator.MUST_PASS_ONE,
        new PrefixFilter(b("m")),
        new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("gz"))))));
    scan(table, "list_and", filtered(new FilterList(FilterList.Operator.MUST_PASS_ALL,
        new ColumnPrefixFilter(b("q")),
        new ValueFilter(CompareOperator.NOT_EQUAL, new BinaryComparator(b("apple"))))));
    scan(table, "timestamps", filtered(new TimestampsFilter(Arrays.asList(10L, 30L)))
        .withStartRow(b("a1")).withStopRow(b("b1")));
    scan(table, "column_range", filtered(new ColumnRangeFilter(b("q2"), true, b("r1"), true)));
    scan(table, "multi_prefix", filtered(new MultipleColumnPrefixFilter(
        new byte[][] {b("x"), b("r")})));
    scan(table, "inclusive_stop", filtered(new InclusiveStopFilter(b("m2")))
        .withStartRow(b("m1")));
    scan(table, "reversed", new Scan().setReversed(true).withStartRow(b("m2"))
        .withStopRow(b("a2")));
    scan(table, "reversed_prefix", filtered(new PrefixFilter(b("a"))).setReversed(true));
    scan(table, "batch", new Scan().setBatch(2).withStartRow(b("m1")).withStopRow(b("m2")));
    scan(table, "limit", new Scan().setLimit(3));
    scan(table, "versions_range", new Scan().readVersions(3).setTimeRange(15, 50)
        .withStartRow(b("n1")).withStopRow(b("n2")));
    scan(table, "store_limit_offset", new Scan().setMaxResultsPerColumnFamily(1)
        .setRowOffsetPerColumnFamily(1).withStartRow(b("a1")).withStopRow(b("b1")));
    scan(table, "small_calls", new Scan().setCaching(1).setMaxResultSize(10));
    scan(table, "partial", new Scan().setAllowPartialResults(true).setMaxResultSize(1)
        .withStartRow(b("m1")).withStopRow(b("m2")));
    get(table, "get_count", new Get(b("a1")).setFilter(new ColumnCountGetFilter(2)));
    get(table, "get_regex", new Get(b("b1")).setFilter(new ValueFilter(CompareOperator.EQUAL,
        new RegexStringComparator("^d", java.util.regex.Pattern.CASE_INSENSITIVE))));
    get(table, "get_family_range", new Get(b("a1")).readAllVersions()
        .setColumnFamilyTimeRange(F, 0, 15));
    get(table, "get_store_limit", new Get(b("a1")).setMaxResultsPerColumnFamily(1));
    List<Get> gets = new ArrayList<>();
    for (String row : new String[] {"a2", "m2"}) {
      gets.add(new Get(b(row)).setFilter(new QualifierFilter(CompareOperator.EQUAL,
          new BinaryPrefixComparator(b("r")))));
    }
    for (Result result : table.get(gets)) {
      show("batch_get", result);
    }
  }

  private static void scan(Table table, String what, Scan scan) throws Exception {
    try (ResultScanner scanner = table.getScanner(scan)) {
      for (Result result : scanner) {
        show(what, result);
      }
    }
  }

  private static void get(Table table, String what, Get get) throws Exception {
    show(what, table.get(get));
  }

  private static void show(String what, Result result) {
    List<String> cells = new ArrayList<>();
    for (Cell cell : result.rawCells()) {
      cells.add(Bytes.toStringBinary(CellUtil.cloneRow(cell)) + "/"
          + Bytes.toStringBinary(CellUtil.cloneFamily(cell)) + ":"
          + Bytes.toStringBinary(CellUtil.cloneQualifier(cell)) + "/" + cell.getTimestamp() + "="
          + Bytes.toStringBinary(CellUtil.cloneValue(cell)));
    }
    System.out.println(what + ": " + String.join("; ", cells));
  }
}
