package hbasemigrate.check;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The Admin calls of everyday operations, by HBase's own client: the balancer's switch and a
 * balance, a region moved to the server holding it, a split at a row, families added,
 * modified and deleted, a table attribute set, a disable and an enable. One line per
 * outcome ({@code <what> <value>}; a refusal as {@code <what> refused <class>}); the table
 * is deleted at the end. Arguments: quorum host:port, znode parent, table.
 */
public final class AdminCalls {
  private static final byte[] F = Bytes.toBytes("f");
  private static final byte[] H = Bytes.toBytes("h");

  private AdminCalls() {
  }

  public static void main(String[] args) throws Exception {
    TableName name = TableName.valueOf(args[2]);
    try (Connection conn = Clients.connect(args[0], args[1]);
        Admin admin = conn.getAdmin()) {
      Clients.create(admin, name, b("m"), ColumnFamilyDescriptorBuilder.of(F));
      try (Table table = conn.getTable(name)) {
        for (String row : new String[] {"a", "n", "t"}) {
          table.put(new Put(b(row)).addColumn(F, b("q"), b(row)));
        }
        balancer(admin);
        regions(conn, admin, name, table);
        families(admin, name, table);
        System.out.println("balance_on " + admin.balance());
      }
      admin.disableTable(name);
      System.out.println("disabled " + admin.isTableDisabled(name));
      admin.enableTable(name);
      System.out.println("enabled " + admin.isTableEnabled(name));
      admin.disableTable(name);
      admin.deleteTable(name);
    }
  }

  private static byte[] b(String text) {
    return Bytes.toBytes(text);
  }

  private static void balancer(Admin admin) throws Exception {
    boolean was = admin.balancerSwitch(false, true);
    System.out.println("balancer_was " + was);
    System.out.println("balancer_enabled " + admin.isBalancerEnabled());
    System.out.println("balance_off " + admin.balance());
    System.out.println("balancer_was " + admin.balancerSwitch(was, true));
  }

  private static void regions(Connection conn, Admin admin, TableName name, Table table)
      throws Exception {
    HRegionLocation where = conn.getRegionLocator(name).getRegionLocation(b("a"), true);
    admin.move(where.getRegion().getEncodedNameAsBytes(), where.getServerName());
    System.out.println("moved_in_place " + conn.getRegionLocator(name)
        .getRegionLocation(b("a"), true).getServerName().equals(where.getServerName()));
    admin.split(name, b("t"));
    List<String> starts = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      starts.clear();
      for (RegionInfo region : admin.getRegions(name)) {
        if (!region.isSplitParent() && !region.isOffline()) {
          starts.add(Bytes.toStringBinary(region.getStartKey()));
        }
      }
      if (starts.size() == 3) {
        break;
      }
      Thread.sleep(100);
    }
    System.out.println("regions " + String.join(",", starts));
    try {
      admin.split(name, b("t"));
      System.out.println("split_at_start accepted");
    } catch (Exception e) {
      System.out.println("split_at_start refused " + e.getClass().getSimpleName());
    }
    List<String> rows = new ArrayList<>();
    try (ResultScanner scanner = table.getScanner(new Scan())) {
      for (Result result : scanner) {
        rows.add(Bytes.toString(result.getRow()));
      }
    }
    System.out.println("rows " + String.join(",", rows));
  }

  private static void families(Admin admin, TableName name, Table table) throws Exception {
    admin.addColumnFamily(name, ColumnFamilyDescriptorBuilder.of(H));
    table.put(new Put(b("t")).addColumn(H, b("q"), b("h")));
    System.out.println("with_h " + table.get(new Get(b("t"))).size());
    try {
      admin.addColumnFamily(name, ColumnFamilyDescriptorBuilder.of(H));
      System.out.println("add_again accepted");
    } catch (Exception e) {
      System.out.println("add_again refused " + e.getClass().getSimpleName());
    }
    admin.modifyColumnFamily(name,
        ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(5).build());
    System.out.println("f_versions "
        + admin.getDescriptor(name).getColumnFamily(F).getMaxVersions());
    admin.deleteColumnFamily(name, H);
    List<String> names = new ArrayList<>();
    for (ColumnFamilyDescriptor family : admin.getDescriptor(name).getColumnFamilies()) {
      names.add(family.getNameAsString());
    }
    System.out.println("families " + String.join(",", names));
    System.out.println("without_h " + table.get(new Get(b("t"))).size());
    try {
      admin.deleteColumnFamily(name, H);
      System.out.println("delete_again accepted");
    } catch (Exception e) {
      System.out.println("delete_again refused " + e.getClass().getSimpleName());
    }
    try {
      admin.deleteColumnFamily(name, F);
      System.out.println("delete_last accepted");
    } catch (Exception e) {
      System.out.println("delete_last refused " + e.getClass().getSimpleName());
    }
    admin.modifyTable(TableDescriptorBuilder.newBuilder(admin.getDescriptor(name))
        .setValue("note", "kept").build());
    System.out.println("note " + admin.getDescriptor(name).getValue("note"));
  }
}
