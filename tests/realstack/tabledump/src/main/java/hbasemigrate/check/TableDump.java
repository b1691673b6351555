package hbasemigrate.check;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Every cell of a table as HBase's own client reads it, from a cluster found through
 * ZooKeeper, optionally only those written before a timestamp: first every version a read
 * sees ({@code visible}), then every cell a raw scan sees ({@code raw}: the delete markers
 * and the cells they hide too). One line per cell,
 * {@code CELL <visible|raw> row family xqualifier timestamp type xvalue} (bytes in hex, the
 * type byte as KeyValue has it), then its regions ({@code REGION} lines), then {@code END <visible cells> <raw cells>}. Only calls
 * HBase 1.x, 2.x and 3.x all have (the one that differs is found by name). Arguments: quorum
 * host:port, znode parent, table [before timestamp].
 *
 * <p>With the system property {@code tabledump.codec} (say
 * {@code org.apache.hadoop.hbase.codec.KeyValueCodecWithTags}) the client asks the servers for
 * cell blocks in that codec ({@code hbase.client.rpc.codec}), and each {@code CELL} line ends
 * with {@code xtags}: the cell's tags area in hex as KeyValue holds it (empty: none).
 *
 * <p>A Kerberos-secured cluster is read as the principal of the system property
 * {@code tabledump.principal}, logged in from the keytab {@code tabledump.keytab} (JAAS's
 * Krb5LoginModule, for HBase's RPC and for ZooKeeper's SASL; no password), the servers'
 * principals {@code tabledump.hbase.principal} and {@code tabledump.zookeeper.principal}, at
 * {@code tabledump.rpc.protection}; {@code java.security.krb5.conf} names the realm's settings.
 */
public final class TableDump {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private TableDump() {
  }

  public static void main(String[] args) throws Exception {
    String[] quorum = args[0].split(":");
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", quorum[0]);
    conf.set("hbase.zookeeper.property.clientPort", quorum[1]);
    conf.set("zookeeper.znode.parent", args[1]);
    // HBase 3's client finds a cluster through its masters by default (RpcConnectionRegistry);
    // this one goes through ZooKeeper, as 2.x's does by default. 1.x has no such class.
    String zooKeeperRegistry = "org.apache.hadoop.hbase.client.ZKConnectionRegistry";
    try {
      Class.forName(zooKeeperRegistry);
      conf.set("hbase.client.registry.impl", zooKeeperRegistry);
    } catch (ClassNotFoundException e) {
      // 1.x: ZooKeeper is its only registry
    }
    conf.setInt("hbase.client.retries.number", 10);
    conf.setInt("hbase.rpc.timeout", 30000);
    String codec = System.getProperty("tabledump.codec");
    if (codec != null) {
      conf.set("hbase.client.rpc.codec", codec);
    }
    String principal = System.getProperty("tabledump.principal");
    if (principal != null) {
      login(conf, principal, System.getProperty("tabledump.keytab"));
    }
    TableName name = TableName.valueOf(args[2]);
    Long before = args.length > 3 ? Long.valueOf(args[3]) : null;
    try (Connection conn = ConnectionFactory.createConnection(conf);
        Table table = conn.getTable(name)) {
      long visible = dump(table, "visible", before, codec != null);
      long raw = dump(table, "raw", before, codec != null);
      regions(conn, name);
      System.out.println("END " + visible + " " + raw);
    }
  }

  /** Every version: readAllVersions (2.0+; 3.x has no other), else setMaxVersions (1.x). */
  private static void allVersions(Scan scan) throws Exception {
    try {
      Scan.class.getMethod("readAllVersions").invoke(scan);
    } catch (NoSuchMethodException e) {
      Scan.class.getMethod("setMaxVersions").invoke(scan);
    }
  }

  /**
   * The table's regions as its region locator lists them, one line each:
   * {@code REGION xstartkey xendkey host port}. The region of a location is getRegion (2.0+;
   * 3.x has no other) or getRegionInfo (1.x), read through the type the method declares.
   */
  private static void regions(Connection conn, TableName name) throws Exception {
    Method region;
    try {
      region = HRegionLocation.class.getMethod("getRegion");
    } catch (NoSuchMethodException e) {
      region = HRegionLocation.class.getMethod("getRegionInfo");
    }
    Method start = region.getReturnType().getMethod("getStartKey");
    Method end = region.getReturnType().getMethod("getEndKey");
    StringBuilder line = new StringBuilder();
    try (RegionLocator locator = conn.getRegionLocator(name)) {
      for (HRegionLocation location : locator.getAllRegionLocations()) {
        Object info = region.invoke(location);
        byte[] startKey = (byte[]) start.invoke(info);
        byte[] endKey = (byte[]) end.invoke(info);
        line.setLength(0);
        line.append("REGION x");
        hex(line, startKey, 0, startKey.length).append(" x");
        hex(line, endKey, 0, endKey.length).append(' ')
            .append(location.getServerName().getHostname()).append(' ')
            .append(location.getServerName().getPort());
        System.out.println(line);
      }
    }
  }

  /** Kerberos on HBase's RPC and ZooKeeper, logged in as {@code principal} from {@code keytab}. */
  private static void login(Configuration conf, String principal, String keytab)
      throws Exception {
    conf.set("hadoop.security.authentication", "kerberos");
    conf.set("hbase.security.authentication", "kerberos");
    conf.set("hbase.master.kerberos.principal", System.getProperty("tabledump.hbase.principal"));
    conf.set("hbase.regionserver.kerberos.principal",
        System.getProperty("tabledump.hbase.principal"));
    conf.set("hbase.rpc.protection", System.getProperty("tabledump.rpc.protection"));
    System.setProperty("zookeeper.server.principal",
        System.getProperty("tabledump.zookeeper.principal"));
    Map<String, String> options = new HashMap<>();
    options.put("useKeyTab", "true");
    options.put("keyTab", keytab);
    options.put("principal", principal);
    options.put("storeKey", "true");
    options.put("useTicketCache", "false");
    options.put("doNotPrompt", "true");
    AppConfigurationEntry[] client = {new AppConfigurationEntry(
        "com.sun.security.auth.module.Krb5LoginModule", LoginModuleControlFlag.REQUIRED,
        options)};
    // ZooKeeper's client logs in through the JAAS section "Client"; HBase's RPC through
    // Hadoop's own login of the same keytab.
    javax.security.auth.login.Configuration.setConfiguration(
        new javax.security.auth.login.Configuration() {
          @Override
          public AppConfigurationEntry[] getAppConfigurationEntry(String section) {
            return "Client".equals(section) ? client : null;
          }
        });
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation.loginUserFromKeytab(principal, keytab);
  }

  @SuppressWarnings("deprecation")  // getTypeByte: 1.x has no other
  private static long dump(Table table, String what, Long before, boolean tags)
      throws Exception {
    Scan scan = new Scan();
    allVersions(scan);
    scan.setRaw("raw".equals(what));
    scan.setCaching(500);
    if (before != null) {
      scan.setTimeRange(0, before);
    }
    long cells = 0;
    StringBuilder line = new StringBuilder();
    try (ResultScanner scanner = table.getScanner(scan)) {
      for (Result result : scanner) {
        for (Cell c : result.rawCells()) {
          line.setLength(0);
          line.append("CELL ").append(what).append(' ');
          hex(line, c.getRowArray(), c.getRowOffset(), c.getRowLength()).append(' ');
          hex(line, c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength()).append(" x");
          hex(line, c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength());
          line.append(' ').append(c.getTimestamp()).append(' ').append(c.getTypeByte())
              .append(" x");
          hex(line, c.getValueArray(), c.getValueOffset(), c.getValueLength());
          if (tags) {
            tags(line.append(" x"), c);
          }
          System.out.println(line);
          cells++;
        }
      }
    }
    return cells;
  }

  /**
   * The cell's tags area in hex. 3.x's Cell has no tag methods (its ExtendedCell has), 1.x and
   * 2.x's have: they are found by name on the cell's own class.
   */
  private static void tags(StringBuilder line, Cell c) throws Exception {
    Class<?> kind = c.getClass();
    int length = (Integer) kind.getMethod("getTagsLength").invoke(c);
    if (length > 0) {
      byte[] bytes = (byte[]) kind.getMethod("getTagsArray").invoke(c);
      int offset = (Integer) kind.getMethod("getTagsOffset").invoke(c);
      hex(line, bytes, offset, length);
    }
  }

  private static StringBuilder hex(StringBuilder out, byte[] bytes, int offset, int length) {
    for (int i = offset; i < offset + length; i++) {
      out.append(HEX[(bytes[i] >> 4) & 0xf]).append(HEX[bytes[i] & 0xf]);
    }
    return out;
  }
}
