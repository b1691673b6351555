package hbasemigrate.realstack;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.HColumnDescriptor;
import org.apache.hadoop.hbase.HRegionInfo;
import org.apache.hadoop.hbase.HTableDescriptor;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.replication.ReplicationAdmin;
import org.apache.hadoop.hbase.replication.ReplicationPeerConfig;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.regionserver.Region;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.FSUtils;
import org.apache.hadoop.hbase.wal.DefaultWALProvider;

/**
 * Real Apache HBase 1.x on 127.0.0.1 for tests, the 1.x API's counterpart of the 2.x stack's
 * launcher (../hbase): HBase's own test utility starts a mini HDFS (with WebHDFS) on the
 * Hadoop the release ships with, ZooKeeper, a master and K region servers in this JVM; HBase's
 * Thrift1 and Thrift2 servers run beside them. Writes cluster.json with the 2.x stack's keys
 * and prints it as one line when ready; serves admin operations as JSON over HTTP.
 *
 * <p>Arguments: --dir D --region-servers K --masters M --wal-compression none|dict|dict+tags
 * --roll-period MS --roll-size BYTES --archive-ttl MS --cleaner-interval MS --name N
 * --wal-codec CLASS (hbase.regionserver.wal.codec, e.g. Phoenix's IndexedWALEditCodec)
 * --replication-peer ID (a peer nobody answers for: its queues hold the WALs).
 *
 * <p>With Apache Phoenix on the class path (the module's phoenix profile) the operation "sql"
 * runs statements through Phoenix's JDBC driver against this cluster.
 */
public final class RealHBase implements StackSupport.Stack {
  private static final String HOST = "127.0.0.1";
  private static final Gson GSON = new Gson();

  private final Map<String, String> options;
  private HBaseTestingUtility util;
  private Admin admin;
  private HttpServer http;
  private String peer;
  private final java.io.PrintStream ready;

  private RealHBase(Map<String, String> options, java.io.PrintStream ready) {
    this.options = options;
    this.ready = ready;
  }

  public static void main(String[] args) throws Exception {
    StackSupport.launch(args, RealHBase::new);
  }

  private String opt(String name, String otherwise) {
    return options.getOrDefault(name, otherwise);
  }

  /** WAL dictionary compression none|dict|dict+tags in conf. */
  private static void setCompression(Configuration conf, String mode) {
    if (!List.of("none", "dict", "dict+tags").contains(mode)) {
      throw new IllegalArgumentException("WAL compression none|dict|dict+tags, got " + mode);
    }
    conf.setBoolean("hbase.regionserver.wal.enablecompression", mode.startsWith("dict"));
    conf.setBoolean("hbase.regionserver.wal.tags.enablecompression", mode.equals("dict+tags"));
  }

  private Configuration configure() {
    Configuration conf = util.getConfiguration();
    setCompression(conf, opt("wal-compression", "none"));
    if (options.containsKey("wal-codec")) {
      conf.set("hbase.regionserver.wal.codec", opt("wal-codec", ""));
    }
    conf.set("hbase.wal.provider", "filesystem");
    long rollSize = Long.parseLong(opt("roll-size", String.valueOf(64L << 20)));
    conf.setLong("hbase.regionserver.hlog.blocksize", rollSize * 2);
    conf.setFloat("hbase.regionserver.logroll.multiplier", 0.5f);
    conf.setLong("hbase.regionserver.logroll.period",
        Long.parseLong(opt("roll-period", "3600000")));
    conf.setLong("hbase.master.logcleaner.ttl", Long.parseLong(opt("archive-ttl", "600000")));
    conf.setInt("hbase.master.cleaner.interval",
        Integer.parseInt(opt("cleaner-interval", "10000")));
    // Tags (a per-cell TTL, say) are written to HFiles only in format 3, 1.x's default.
    conf.setInt("hfile.format.version", 3);
    StackSupport.loopback(conf);
    return conf;
  }

  @Override
  public void start() throws Exception {
    long began = System.nanoTime();
    Path dir = Paths.get(opt("dir", "state/realstack")).toAbsolutePath();
    Files.createDirectories(dir);
    System.setProperty("test.build.data.basedirectory", dir.resolve("data").toString());
    util = new HBaseTestingUtility();
    Configuration conf = configure();
    int servers = Integer.parseInt(opt("region-servers", "2"));
    int masters = Integer.parseInt(opt("masters", "1"));
    util.startMiniCluster(masters, servers, 1, null, null, null);
    admin = util.getHBaseAdmin();
    int thrift = StackSupport.freePort();
    int thrift2 = StackSupport.freePort();
    gateways(conf, dir, thrift, thrift2);
    StackSupport.waitForPort(thrift);
    StackSupport.waitForPort(thrift2);
    peer = options.get("replication-peer");
    if (peer != null) {
      // A peer nobody answers for: its queues keep the WALs, as a stalled peer does. Added
      // once conf/hbase-site.xml is written: each server reads its class path's while it
      // adds the peer (a half-written file fails the peer there).
      ReplicationPeerConfig config = new ReplicationPeerConfig();
      config.setClusterKey(HOST + ":" + util.getZkCluster().getClientPort() + ":/hbase-peer");
      try (ReplicationAdmin replication = new ReplicationAdmin(conf)) {
        replication.addPeer(peer, config, null);
      }
    }
    http = HttpServer.create(new InetSocketAddress(HOST, 0), 0);
    http.createContext("/",
        exchange -> StackSupport.serve(exchange, this::run, GSON::toJson));
    http.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    http.start();

    Map<String, Object> described = StackSupport.described(util, opt("name", "realhbase"),
        thrift, thrift2, "buffered", FSUtils.getRootDir(conf).toUri().getPath(), http,
        dir.toString());
    described.put("hadoop_version", org.apache.hadoop.util.VersionInfo.getVersion());
    described.put("started_in_ms", (System.nanoTime() - began) / 1_000_000);
    String line = GSON.toJson(described);
    Path json = dir.resolve("cluster.json");
    Path tmp = dir.resolve("cluster.json.tmp");
    Files.writeString(tmp, line);
    Files.move(tmp, json, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    ready.println(line);
    ready.flush();
  }

  /**
   * HBase 1.x's Thrift servers take their settings only from hbase-site.xml on the class path
   * (Thrift2's has no constructor taking a Configuration, Thrift1's is package-private, and
   * HBaseConfiguration reads through its own class loader): the gateways' settings are
   * written to DIR/conf/hbase-site.xml, a folder the stack's class path ends with.
   */
  private void gateways(Configuration conf, Path dir, int thrift, int thrift2) throws Exception {
    Configuration gatewayConf = new Configuration(conf);
    // The gateways' client gives up after ~2 s instead of minutes; errors are HBase's own.
    gatewayConf.setInt("hbase.client.retries.number", 5);
    gatewayConf.setInt("hbase.thrift.info.port", -1);
    Path folder = dir.resolve("conf");
    Files.createDirectories(folder);
    Path site = folder.resolve("hbase-site.xml");
    try (OutputStream out = Files.newOutputStream(site)) {
      gatewayConf.writeXml(out);
    }
    if (ClassLoader.getSystemResource("hbase-site.xml") == null) {
      throw new IOException(site + " is not on the class path: the Thrift gateways would not "
          + "find the cluster");
    }
    String[] thrift1Args = {"-b", HOST, "-p", String.valueOf(thrift), "start"};
    String[] thrift2Args = {"-b", HOST, "-p", String.valueOf(thrift2), "start"};
    gateway("thrift1", () -> org.apache.hadoop.hbase.thrift.ThriftServer.main(thrift1Args));
    gateway("thrift2", () -> org.apache.hadoop.hbase.thrift2.ThriftServer.main(thrift2Args));
  }

  private interface Gateway {
    void run() throws Exception;
  }

  private static void gateway(String name, Gateway body) {
    Thread thread = new Thread(() -> {
      try {
        body.run();
      } catch (Exception e) {
        System.err.println("realstack: " + name + " gateway failed: " + e);
        Runtime.getRuntime().halt(1);
      }
    }, "realstack-" + name);
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public synchronized void stop() {
    StackSupport.stop(http, util);
  }

  // --- admin endpoint ---------------------------------------------------------------------

  private static String str(JsonObject args, String name) {
    JsonElement value = args.get(name);
    return value == null || value.isJsonNull() ? null : value.getAsString();
  }

  private Object run(String op, String body) throws Exception {
    JsonObject args = body.isBlank() ? new JsonObject() : GSON.fromJson(body, JsonObject.class);
    switch (op) {
      case "info":
        return info();
      case "roll":
        return roll(str(args, "server"));
      case "flush":
        return flush(str(args, "table"));
      case "move":
        return move(str(args, "region"), str(args, "server"));
      case "split":
        return split(str(args, "table"), str(args, "at"));
      case "kill":
        return kill(str(args, "server"));
      case "finish-split":
        util.waitUntilNoRegionsInTransition(120_000);
        return splitting();
      case "create-table":
        return createTable(str(args, "table"), args.getAsJsonArray("families"),
            args.getAsJsonArray("splits"));
      case "delete":
        return delete(args);
      case "wal-compression":
        return walCompression(str(args, "mode"));
      case "replication":
        return replication(args.get("enabled").getAsBoolean());
      case "sql":
        return sql(args);
      default:
        throw new StackSupport.UnknownOperation(op);
    }
  }

  /** The "sql" operation: {"statements": [...], "properties"?: {...}} (StackSupport.sql). */
  @SuppressWarnings("unchecked")
  private List<Object> sql(JsonObject args) throws java.sql.SQLException {
    return StackSupport.sql(util, GSON.fromJson(args.get("statements"), List.class),
        args.has("properties") ? GSON.fromJson(args.get("properties"), Map.class) : Map.of());
  }

  private MiniHBaseCluster cluster() {
    return util.getMiniHBaseCluster();
  }

  private List<String> liveServers() {
    return StackSupport.liveServers(cluster());
  }

  /** A server by its name (host,port,startcode) or slot number; null = every live one. */
  private List<HRegionServer> servers(String which) {
    return StackSupport.servers(cluster(), which);
  }

  private Map<String, Object> info() throws Exception {
    List<Map<String, Object>> servers = new ArrayList<>();
    int slot = 0;
    FileSystem fs = util.getDFSCluster().getFileSystem();
    for (var t : cluster().getRegionServerThreads()) {
      HRegionServer rs = t.getRegionServer();
      boolean alive = !rs.isStopped() && !rs.isAborted();
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("name", rs.getServerName().toString());
      s.put("slot", slot++);
      s.put("alive", alive);
      org.apache.hadoop.fs.Path current = alive
          ? DefaultWALProvider.getCurrentFileName(rs.getWAL(null)) : null;
      s.put("wal", current == null ? null : current.getName());
      s.put("wal_size", current == null ? null : fs.getFileStatus(current).getLen());
      List<String> regions = new ArrayList<>();
      if (alive) {
        for (Region r : rs.getOnlineRegionsLocalContext()) {
          regions.add(r.getRegionInfo().getEncodedName());
        }
      }
      regions.sort(null);
      s.put("regions", regions);
      servers.add(s);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("servers", servers);
    out.put("splitting", splitting());
    org.apache.hadoop.fs.Path old = new org.apache.hadoop.fs.Path(
        FSUtils.getRootDir(util.getConfiguration()), "oldWALs");
    out.put("old_wals", fs.exists(old) ? fs.listStatus(old).length : 0);
    out.put("region_servers", liveServers());
    if (peer != null) {
      try (ReplicationAdmin replication = new ReplicationAdmin(util.getConfiguration())) {
        out.put("replication", Map.of("peer", peer, "enabled",
            replication.getPeerState(peer)));
      }
    }
    return out;
  }

  private Object replication(boolean enabled) throws Exception {
    if (peer == null) {
      throw new IllegalStateException("this cluster has no replication peer (--replication-peer)");
    }
    try (ReplicationAdmin replication = new ReplicationAdmin(util.getConfiguration())) {
      if (enabled) {
        replication.enablePeer(peer);
      } else {
        replication.disablePeer(peer);
      }
    }
    return Map.of("peer", peer, "enabled", enabled);
  }

  private List<String> splitting() throws IOException {
    return StackSupport.splitting(util.getDFSCluster().getFileSystem(),
        FSUtils.getRootDir(util.getConfiguration()));
  }

  /** Every WAL of the servers rolled: 1.x's rollWALWriter rolls the region WAL only, so the
   * meta WAL of a server holding hbase:meta is rolled here (as 2.x's call rolls both). */
  private Object roll(String server) throws IOException {
    List<String> rolled = new ArrayList<>();
    for (HRegionServer rs : servers(server)) {
      admin.rollWALWriter(rs.getServerName());
      HRegionInfo meta = HRegionInfo.FIRST_META_REGIONINFO;
      if (rs.getFromOnlineRegions(meta.getEncodedName()) != null) {
        rs.getWAL(meta).rollWriter(true);
      }
      rolled.add(rs.getServerName().toString());
    }
    return rolled;
  }

  /** A table's regions flushed (every region, system ones too, when no table is named),
   * in this JVM; a flush already running is waited out (bounded). */
  private Object flush(String table) throws Exception {
    TableName name = table == null ? null : TableName.valueOf(table);
    for (HRegionServer rs : servers(null)) {
      for (Region r : name == null ? rs.getOnlineRegionsLocalContext()
          : rs.getOnlineRegions(name)) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (r.flush(true).getResult() == Region.FlushResult.Result.CANNOT_FLUSH
            && !r.isClosing() && !r.isClosed()) {
          if (System.currentTimeMillis() > deadline) {
            throw new IOException("region " + r.getRegionInfo().getEncodedName()
                + " could not be flushed within 60 s (a flush kept running)");
          }
          Thread.sleep(50);
        }
      }
    }
    return true;
  }

  /**
   * WAL compression of the WALs the live region servers write next (after a roll): 1.x's
   * writer reads it from its server's configuration each time it opens a file
   * (ProtobufLogWriter.init), so one running stack writes plain and compressed WALs.
   */
  private Object walCompression(String mode) {
    List<String> set = new ArrayList<>();
    for (HRegionServer rs : servers(null)) {
      setCompression(rs.getConfiguration(), mode);
      set.add(rs.getServerName().toString());
    }
    return set;
  }

  /** A table with the families {"name", "max_versions"?} and split keys (toStringBinary). */
  private Object createTable(String table, JsonArray families, JsonArray splits)
      throws IOException {
    HTableDescriptor descriptor = new HTableDescriptor(TableName.valueOf(table));
    for (JsonElement e : families) {
      JsonObject f = e.getAsJsonObject();
      HColumnDescriptor family = new HColumnDescriptor(Bytes.toBytesBinary(str(f, "name")));
      if (f.has("max_versions")) {
        family.setMaxVersions(f.get("max_versions").getAsInt());
      }
      descriptor.addFamily(family);
    }
    byte[][] keys = new byte[splits == null ? 0 : splits.size()][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = Bytes.toBytesBinary(splits.get(i).getAsString());
    }
    admin.createTable(descriptor, keys.length == 0 ? null : keys);
    return admin.getTableRegions(descriptor.getTableName()).size();
  }

  /**
   * One delete through HBase's own client, of the kind 1.x's Thrift2 cannot ask for:
   * {"table", "row", "family", "timestamp", "type": "DeleteFamilyVersion"} (the other kinds
   * go through Thrift2).
   */
  private Object delete(JsonObject args) throws IOException {
    String type = str(args, "type");
    if (!"DeleteFamilyVersion".equals(type)) {
      throw new IllegalArgumentException("delete: only type DeleteFamilyVersion here, got "
          + type);
    }
    Delete delete = new Delete(Bytes.toBytesBinary(str(args, "row")));
    delete.addFamilyVersion(Bytes.toBytesBinary(str(args, "family")),
        args.get("timestamp").getAsLong());
    try (Table t = util.getConnection().getTable(TableName.valueOf(str(args, "table")))) {
      t.delete(delete);
    }
    return true;
  }

  /** The region of table holding row at (toStringBinary) split there; returns once a region
   * starts at that row, with the table's region count. */
  private Object split(String table, String at) throws Exception {
    TableName name = TableName.valueOf(table);
    byte[] row = Bytes.toBytesBinary(at);
    long deadline = System.currentTimeMillis() + 120_000;
    boolean asked = false;
    while (!startsAt(name, row)) {
      if (!asked) {
        admin.split(name, row);
        asked = true;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("table " + table + ": no region starts at " + at
            + " 120 s after the split was asked");
      }
      Thread.sleep(200);
    }
    util.waitUntilNoRegionsInTransition(120_000);
    Map<String, Object> done = new LinkedHashMap<>();
    done.put("table", table);
    done.put("at", at);
    done.put("regions", admin.getTableRegions(name).size());
    return done;
  }

  private boolean startsAt(TableName name, byte[] row) throws IOException {
    for (HRegionInfo r : admin.getTableRegions(name)) {
      if (Bytes.equals(r.getStartKey(), row) && !r.isSplitParent() && !r.isOffline()) {
        return true;
      }
    }
    return false;
  }

  /** As the 2.x stack answers: {"region", "from", "to"}. */
  private Object move(String region, String server) throws Exception {
    String from = hosting(region);
    byte[] to = server == null ? null
        : Bytes.toBytes(servers(server).get(0).getServerName().getServerName());
    admin.move(Bytes.toBytes(region), to);
    util.waitUntilNoRegionsInTransition(120_000);
    String now = hosting(region);
    if (now == null) {
      throw new IOException("region " + region + " is not open anywhere after the move");
    }
    Map<String, Object> moved = new LinkedHashMap<>();
    moved.put("region", region);
    moved.put("from", from);
    moved.put("to", now);
    return moved;
  }

  private String hosting(String region) {
    for (HRegionServer rs : servers(null)) {
      for (Region r : rs.getOnlineRegionsLocalContext()) {
        if (r.getRegionInfo().getEncodedName().equals(region)) {
          return rs.getServerName().toString();
        }
      }
    }
    return null;
  }

  private Object kill(String server) {
    return StackSupport.kill(servers(server).get(0));
  }
}
