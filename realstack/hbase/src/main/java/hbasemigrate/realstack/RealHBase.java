package hbasemigrate.realstack;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
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
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.regionserver.Region;
import org.apache.hadoop.hbase.replication.ReplicationPeerConfig;
import org.apache.hadoop.hbase.tool.BulkLoadHFiles;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.CommonFSUtils;
import org.apache.hadoop.hbase.util.VersionInfo;
import org.apache.hadoop.hbase.wal.AbstractFSWALProvider;
import org.apache.hadoop.util.Tool;
import org.apache.hbase.thirdparty.com.google.gson.Gson;
import org.apache.hbase.thirdparty.com.google.gson.JsonElement;
import org.apache.hbase.thirdparty.com.google.gson.JsonObject;

/**
 * Real Apache HBase on 127.0.0.1 for tests: HBase's own test utility starts a mini HDFS (with
 * WebHDFS), ZooKeeper, a master and K region servers in this JVM; HBase's Thrift1 and Thrift2
 * servers run beside them. Writes cluster.json (the keys of the embedded cluster's) and prints
 * it as one line when ready; serves the embedded cluster's admin operations as JSON over HTTP.
 *
 * <p>Arguments: --dir D --region-servers K --wal-compression none|dict|dict+tags
 * --value-compression none|gz|snappy|lz4|zstd|... --roll-period MS --roll-size BYTES
 * --archive-ttl MS --cleaner-interval MS --replication-peer ID --name N
 * [--keytab K --realm R --qop auth|auth-int|auth-conf --rpc-protection P
 * --token-provider true|false --client-superuser true|false]: Kerberos everywhere, HBase
 * issuing delegation tokens unless told not to, the client principal an HDFS superuser when
 * told to (see secure());
 * [--thrift-http true]: both gateways speak Thrift over HTTP (see httpGateways());
 * [--rpc-tls D --rpc-tls-plaintext true|false]: TLS on HBase's RPC, certificates in D (see
 * tls()).
 * [--gateways false]: no Thrift gateway at all (cluster.json then says client native).
 */
public final class RealHBase implements StackSupport.Stack {
  private static final String HOST = "127.0.0.1";
  private static final Gson GSON = new Gson();
  /** Codec settings HBase's Compression reads from its static configuration. */
  static final String SITE = "realstack-site.xml";

  private final Map<String, String> options;
  private HBaseTestingUtility util;
  private Admin admin;
  private HttpServer http;
  private String peer;
  private final java.io.PrintStream ready;
  private final List<Thread> gateways = new ArrayList<>();
  private Configuration thrift2Conf;
  private Tool thrift2Server;
  private int thrift2Port;
  private volatile Object stoppedGateway;
  private static final String ABORT_TIMEOUT = "hbase.regionserver.abort.timeout";
  private static final long ABORT_TIMEOUT_MS = 30L * 24 * 3600 * 1000;

  /** Made once stdout carries only the ready line: Hadoop's logging starts here. */
  private RealHBase(Map<String, String> options, java.io.PrintStream ready) {
    Configuration.addDefaultResource(SITE);
    this.options = options;
    this.ready = ready;
  }

  public static void main(String[] args) throws Exception {
    StackSupport.launch(args, RealHBase::new);
  }

  private String opt(String name, String otherwise) {
    return options.getOrDefault(name, otherwise);
  }

  private Configuration configure() throws IOException {
    Configuration conf = util.getConfiguration();
    String compression = opt("wal-compression", "none");
    conf.setBoolean("hbase.regionserver.wal.enablecompression", compression.startsWith("dict"));
    conf.setBoolean("hbase.regionserver.wal.tags.enablecompression",
        compression.equals("dict+tags"));
    String codec = opt("value-compression", "none");
    conf.setBoolean("hbase.regionserver.wal.value.enablecompression", !codec.equals("none"));
    if (!codec.equals("none")) {
      conf.set("hbase.regionserver.wal.value.compression.type", codec);
    }
    if (options.containsKey("wal-codec")) {
      conf.set("hbase.regionserver.wal.codec", opt("wal-codec", ""));
    }
    conf.set("hbase.wal.provider", opt("wal-provider", "filesystem"));
    long rollSize = Long.parseLong(opt("roll-size", String.valueOf(64L << 20)));
    conf.setLong("hbase.regionserver.hlog.blocksize", rollSize * 2);
    conf.setFloat("hbase.regionserver.logroll.multiplier", 0.5f);
    conf.setLong("hbase.regionserver.logroll.period",
        Long.parseLong(opt("roll-period", "3600000")));
    conf.setLong("hbase.master.logcleaner.ttl", Long.parseLong(opt("archive-ttl", "600000")));
    conf.setInt("hbase.master.cleaner.interval",
        Integer.parseInt(opt("cleaner-interval", "10000")));
    StackSupport.loopback(conf);
    // A region server that `kill` aborted halts its whole JVM after this timeout (HBASE-21325,
    // 20 minutes by default): here that JVM is the whole stack. Long enough for any run.
    conf.setLong(ABORT_TIMEOUT, ABORT_TIMEOUT_MS);
    // Files a compaction replaced are archived by a chore every 2 minutes by default, and a
    // split's daughter holds its references (and cannot split again) until then: 1 s here.
    conf.setInt("hbase.hfile.compaction.discharger.interval", 1000);
    if (options.containsKey("keytab")) {
      secure(conf);
    }
    if (options.containsKey("rpc-tls")) {
      tls(conf);
    }
    return conf;
  }

  /**
   * TLS on the RPC of the master and region servers (HBase 2.6's X509Util settings), for
   * their own clients too (master, region servers and gateways talk to each other through
   * it). The keystore's password is read from a file of the folder realstack made, never
   * passed as an argument. Client certificates are wanted (HBase's default, NEED); a
   * plain connection is refused unless --rpc-tls-plaintext true.
   */
  private void tls(Configuration conf) throws IOException {
    Path dir = Paths.get(options.get("rpc-tls")).toAbsolutePath();
    conf.setBoolean("hbase.server.netty.tls.enabled", true);
    conf.setBoolean("hbase.server.netty.tls.supportplaintext",
        Boolean.parseBoolean(opt("rpc-tls-plaintext", "false")));
    conf.setBoolean("hbase.client.netty.tls.enabled", true);
    conf.set("hbase.rpc.tls.keystore.location", dir.resolve("server.p12").toString());
    conf.set("hbase.rpc.tls.keystore.type", "PKCS12");
    conf.set("hbase.rpc.tls.keystore.password",
        Files.readString(dir.resolve("keystore.password")).trim());
    conf.set("hbase.rpc.tls.truststore.location", dir.resolve("ca.pem").toString());
    conf.set("hbase.rpc.tls.truststore.type", "PEM");
  }

  /** Service principals: hbase/localhost for HBase, HDFS and both gateways (one, as HBase's
   * own secure tests use; named for the host name the gateways' SASL servers take, that of
   * the loopback interface), HTTP/127.0.0.1 for WebHDFS's SPNEGO, zookeeper/127.0.0.1. */
  private String principal(String service) {
    String host = service.equals("hbase") ? "localhost" : HOST;
    return service + "/" + host + "@" + options.get("realm");
  }

  /**
   * Kerberos for every server of the stack, from one keytab of service principals: HDFS
   * (RPC, WebHDFS with SPNEGO), HBase (SASL GSSAPI at hbase.rpc.protection, by default
   * authentication; a list such as privacy,integrity,authentication offers each level, the
   * stack's own clients, master and region servers included, asking for the first), both
   * Thrift gateways (SASL GSSAPI with the QOP, a setting of their own) and
   * ZooKeeper (SASL; a client that does not authenticate is refused). The DataNode runs on
   * unprivileged ports (ignore.secure.ports.for.testing, SASL data transfer). HBase's root and WAL folders are
   * readable by the client principal (hbase.rootdir.perms, hbase.wal.dir.perms = 755); with
   * --client-superuser true it is an HDFS superuser (it writes exported snapshots' files).
   */
  private void secure(Configuration conf) throws IOException {
    String keytab = options.get("keytab");
    String hbase = principal("hbase");
    String http = principal("HTTP");
    conf.set("hadoop.security.authentication", "kerberos");
    conf.set("hbase.security.authentication", "kerberos");
    conf.set("hbase.rpc.protection", opt("rpc-protection", "authentication"));
    if (!"false".equals(opt("token-provider", "true"))) {
      // Delegation tokens: HBase's own TokenProvider endpoint on every region (the clients
      // ask hbase:meta's); any secured RPC server accepts the tokens (DIGEST-MD5).
      conf.set("hbase.coprocessor.region.classes",
          "org.apache.hadoop.hbase.security.token.TokenProvider");
    }
    for (String key : new String[] {"hbase.master", "hbase.regionserver", "dfs.namenode",
        "dfs.datanode"}) {
      conf.set(key + ".kerberos.principal", hbase);
      conf.set(key + ".keytab.file", keytab);
    }
    conf.set("hbase.thrift.kerberos.principal", hbase);
    conf.set("hbase.thrift.keytab.file", keytab);
    conf.set("hbase.thrift.security.qop", opt("qop", "auth"));
    conf.set("hbase.thrift.dns.interface", "lo");
    conf.set("dfs.web.authentication.kerberos.principal", http);
    conf.set("dfs.web.authentication.kerberos.keytab", keytab);
    conf.set("dfs.namenode.kerberos.internal.spnego.principal", http);
    conf.setBoolean("dfs.block.access.token.enable", true);
    conf.setBoolean("ignore.secure.ports.for.testing", true);
    conf.set("dfs.data.transfer.protection", "authentication");
    conf.set("hbase.rootdir.perms", "755");
    conf.set("hbase.wal.dir.perms", "755");
    // --client-superuser true: the client principal in HDFS's superuser group, as the user
    // of ExportSnapshot is (the copy by HBase snapshot writes the target's archive/ and
    // .hbase-snapshot/); else it only reads.
    String client = options.getOrDefault("client-principal", "").split("[/@]")[0];
    if ("true".equals(opt("client-superuser", "false")) && !client.isEmpty()) {
      conf.set("hadoop.user.group.static.mapping.overrides",
          "dr.who=;" + client + "=" + conf.get("dfs.permissions.superusergroup", "supergroup")
          + ";");
    }
    Path jaas = Paths.get(opt("dir", "state/realstack")).toAbsolutePath().resolve("jaas.conf");
    String entry = "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        + "storeKey=true useTicketCache=false keyTab=\"" + keytab + "\" principal=\"%s\";";
    Files.writeString(jaas, "Server {\n  " + String.format(entry, principal("zookeeper"))
        + "\n};\nClient {\n  " + String.format(entry, hbase) + "\n};\n");
    System.setProperty("java.security.auth.login.config", jaas.toString());
    System.setProperty("zookeeper.authProvider.1",
        "org.apache.zookeeper.server.auth.SASLAuthenticationProvider");
    System.setProperty("zookeeper.sessionRequireClientSASLAuth", "true");
    // The test utility's ZooKeeper clients name the server "localhost".
    System.setProperty("zookeeper.server.principal", principal("zookeeper"));
    org.apache.hadoop.security.UserGroupInformation.setConfiguration(conf);
    org.apache.hadoop.security.UserGroupInformation.loginUserFromKeytab(hbase, keytab);
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
    int masters = Integer.parseInt(opt("masters", "1")); // more: backup masters
    util.startMiniCluster(StartMiniClusterOption.builder().numMasters(masters)
        .numRegionServers(servers).numDataNodes(1).build());
    admin = util.getAdmin();
    peer = options.get("replication-peer");
    if (peer != null) {
      // A peer nobody answers for: its queues keep the WALs, as a stalled peer does.
      admin.addReplicationPeer(peer, ReplicationPeerConfig.newBuilder()
          .setClusterKey(HOST + ":" + util.getZkCluster().getClientPort() + ":/hbase-peer")
          .build(), true);
    }
    // Without gateways (--gateways false) the stack serves HBase's own RPC only, as a
    // cluster without Thrift does; cluster.json then names no gateway.
    boolean gateways = Boolean.parseBoolean(opt("gateways", "true"));
    boolean thriftHttp = Boolean.parseBoolean(opt("thrift-http", "false"));
    int thrift = 0;
    int thrift2 = 0;
    if (gateways) {
      thrift = StackSupport.freePort();
      thrift2 = StackSupport.freePort();
      // The gateways' client gives up after ~2 s instead of minutes (a write to a disabled
      // table, say), so such calls answer within a test's patience; errors are HBase's own.
      Configuration gatewayConf = new Configuration(conf);
      gatewayConf.setInt("hbase.client.retries.number", 5);
      if (thriftHttp) {
        httpGateways(gatewayConf);
      }
      gateway(thriftServer("thrift", gatewayConf), thrift, "thrift1");
      thrift2Conf = gatewayConf;
      thrift2Port = thrift2;
      thrift2Server = thriftServer("thrift2", gatewayConf);
      gateway(thrift2Server, thrift2, "thrift2");
      StackSupport.waitForPort(thrift);
      StackSupport.waitForPort(thrift2);
    }
    http = HttpServer.create(new InetSocketAddress(HOST, 0), 0);
    http.createContext("/",
        exchange -> StackSupport.serve(exchange, this::run, GSON::toJson));
    // One thread per request: a long flush or roll must not hold up `info` or `kill`.
    http.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    http.start();

    Path rootDir = Paths.get(CommonFSUtils.getRootDir(conf).toUri().getPath());
    Map<String, Object> described = StackSupport.described(util, opt("name", "realhbase"),
        thrift, thrift2, thriftHttp ? "http" : "buffered", rootDir.toString(), http,
        dir.toString());
    if (!gateways) {
      described.remove("thrift");
      described.remove("thrift2");
      described.remove("transport");
      described.remove("protocol");
      described.put("client", "native");
    }
    if (options.containsKey("keytab")) {
      Map<String, Object> security = new LinkedHashMap<>();
      security.put("auth", "kerberos");
      security.put("hbase_principal", principal("hbase"));
      security.put("http_principal", "HTTP/_HOST@" + options.get("realm"));
      security.put("zookeeper_principal", "zookeeper/_HOST@" + options.get("realm"));
      security.put("qop", opt("qop", "auth"));
      security.put("rpc_protection", opt("rpc-protection", "authentication"));
      security.put("principal", options.get("client-principal"));
      security.put("keytab", options.get("client-keytab"));
      security.put("krb5_conf", options.get("krb5-conf"));
      described.put("security", security);
    }
    if (options.containsKey("rpc-tls")) {
      Path tls = Paths.get(options.get("rpc-tls")).toAbsolutePath();
      @SuppressWarnings("unchecked")
      Map<String, Object> security = (Map<String, Object>) described.computeIfAbsent(
          "security", key -> new LinkedHashMap<String, Object>());
      security.put("rpc_tls", "on");
      security.put("tls_ca_file", tls.resolve("ca.pem").toString());
      security.put("tls_cert_file", tls.resolve("client.pem").toString());
      security.put("tls_key_file", tls.resolve("client.key").toString());
    }
    described.put("started_in_ms", (System.nanoTime() - began) / 1_000_000);
    String line = GSON.toJson(described);
    Path json = dir.resolve("cluster.json");
    Path tmp = dir.resolve("cluster.json.tmp");
    Files.writeString(tmp, line);
    if (described.containsKey("security")) {  // it names the client's keys: the owner's only
      Files.setPosixFilePermissions(tmp,
          java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }
    Files.move(tmp, json, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    ready.println(line);
    ready.flush();
  }

  /**
   * Thrift over HTTP for both gateways (hbase.regionserver.thrift.http: ThriftServer serves
   * a TServlet on Jetty at every path, binary protocol only). Secured, the servlet asks every
   * POST for SPNEGO (ThriftHttpServlet) as HTTP/127.0.0.1, the principal WebHDFS uses too;
   * the caller then acts as itself, as over SASL (its connection a proxy user of hbase).
   */
  private void httpGateways(Configuration conf) {
    conf.setBoolean("hbase.regionserver.thrift.http", true);
    if (options.containsKey("keytab")) {
      conf.set("hbase.thrift.spnego.principal", principal("HTTP"));
      conf.set("hbase.thrift.spnego.keytab.file", options.get("keytab"));
    }
  }

  /**
   * HBase's Thrift1 ({@code thrift}) or Thrift2 ({@code thrift2}) server on a copy of
   * {@code conf}, loaded by name: hbase-thrift is on the class path only where Maven Central
   * has it for this version (a stack without gateways runs without it).
   */
  private static Tool thriftServer(String kind, Configuration conf) throws Exception {
    Class<?> server;
    try {
      server = Class.forName("org.apache.hadoop.hbase." + kind + ".ThriftServer");
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("no hbase-thrift " + VersionInfo.getVersion()
          + " on the class path (not on the Maven mirror): run with --gateways false", e);
    }
    return (Tool) server.getConstructor(Configuration.class)
        .newInstance(new Configuration(conf));
  }

  private void gateway(Tool server, int port, String name) {
    Thread thread = new Thread(() -> {
      try {
        // The gateway's worker threads start before it enters its own doAs: run it all as
        // the login user, so that a secured gateway's SASL acceptors find its keytab.
        org.apache.hadoop.security.UserGroupInformation.getLoginUser().doAs(
            (java.security.PrivilegedExceptionAction<Integer>) () -> server.run(
                new String[] {"-b", HOST, "-p", String.valueOf(port), "start"}));
      } catch (Exception e) {
        if (server != stoppedGateway) {  // not the one the service op stopped
          System.err.println("realstack: " + name + " gateway failed: " + e);
          Runtime.getRuntime().halt(1);
        }
      }
    }, "realstack-" + name);
    thread.setDaemon(true);
    thread.start();
    gateways.add(thread);
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
        return flush(str(args, "table"), str(args, "region"));
      case "major-compact":
        return majorCompact(str(args, "table"));
      case "move":
        return move(str(args, "region"), str(args, "server"));
      case "split":
        return split(str(args, "table"), str(args, "at"));
      case "kill":
        return kill(str(args, "server"));
      case "kill-master":
        return killMaster();
      case "restart":
        return restart();
      case "service":
        return service(str(args, "name"), args.get("running").getAsBoolean());
      case "clean":
        return admin.runCleanerChore();
      case "finish-split":
        util.waitUntilNoRegionsInTransition(120_000);
        return splitting();
      case "replication":
        return replication(args.get("enabled").getAsBoolean());
      case "bulk-load":
        return bulkLoad(str(args, "table"), args.getAsJsonArray("cells"));
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

  private Map<String, Object> info() throws IOException {
    List<Map<String, Object>> servers = new ArrayList<>();
    int slot = 0;
    for (var t : cluster().getRegionServerThreads()) {
      HRegionServer rs = t.getRegionServer();
      boolean alive = !rs.isStopped() && !rs.isAborted();
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("name", rs.getServerName().toString());
      s.put("slot", slot++);
      s.put("alive", alive);
      String wal = null;
      Long size = null;
      if (alive) {
        var w = rs.getWAL(null);
        org.apache.hadoop.fs.Path current = AbstractFSWALProvider.getCurrentFileName(w);
        wal = current == null ? null : current.getName();
        size = current == null ? null : util.getDFSCluster().getFileSystem()
            .getFileStatus(current).getLen();
      }
      s.put("wal", wal);
      s.put("wal_size", size);
      List<String> regions = new ArrayList<>();
      // each region's read requests (gets and scan calls, counted as they come)
      Map<String, Long> reads = new java.util.TreeMap<>();
      if (alive) {
        for (Region r : rs.getRegions()) {
          regions.add(r.getRegionInfo().getEncodedName());
          reads.put(r.getRegionInfo().getEncodedName(), r.getReadRequestsCount());
        }
      }
      regions.sort(null);
      s.put("regions", regions);
      s.put("read_requests", reads);
      servers.add(s);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("servers", servers);
    out.put("splitting", splitting());
    FileSystem fs = util.getDFSCluster().getFileSystem();
    org.apache.hadoop.fs.Path old = new org.apache.hadoop.fs.Path(
        CommonFSUtils.getRootDir(util.getConfiguration()), "oldWALs");
    out.put("old_wals", fs.exists(old) ? fs.listStatus(old).length : 0);
    out.put("region_servers", liveServers());
    out.put("abort_timeout_ms", util.getConfiguration().getLong(ABORT_TIMEOUT, -1));
    if (peer != null) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("peer", peer);
      r.put("enabled", admin.getReplicationPeerConfig(peer) != null
          && admin.listReplicationPeers().stream()
              .anyMatch(p -> p.getPeerId().equals(peer) && p.isEnabled()));
      out.put("replication", r);
    }
    return out;
  }

  private List<String> splitting() throws IOException {
    return StackSupport.splitting(util.getDFSCluster().getFileSystem(),
        CommonFSUtils.getRootDir(util.getConfiguration()));
  }

  private Object roll(String server) throws IOException {
    List<String> rolled = new ArrayList<>();
    for (HRegionServer rs : servers(server)) {
      admin.rollWALWriter(rs.getServerName());
      rolled.add(rs.getServerName().toString());
    }
    return rolled;
  }

  /**
   * Flushes run on the region servers' regions in this JVM, never through the master's
   * FlushTableProcedure: in 2.6.1 a region's flush that meets one already running can lose
   * its report and leave the procedure, and the caller, waiting forever (HBASE-29966).
   */
  private Object flush(String table, String region) throws Exception {
    if (region != null) {
      admin.flushRegion(Bytes.toBytes(region));
    } else {
      // No table: every region, system ones too (a rolled WAL is archived once all its
      // regions flushed).
      TableName name = table == null ? null : TableName.valueOf(table);
      for (HRegionServer rs : servers(null)) {
        for (HRegion r : name == null ? rs.getRegions() : rs.getRegions(name)) {
          flushRegion(r);
        }
      }
    }
    return true;
  }

  /** Flush one region, waiting out a flush already running (bounded); a closing region is
   * flushed by its close. */
  private static void flushRegion(HRegion region) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (region.flush(true).getResult() == HRegion.FlushResult.Result.CANNOT_FLUSH
        && !region.isClosing() && !region.isClosed()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("region " + region.getRegionInfo().getEncodedName()
            + " could not be flushed within 60 s (a flush kept running)");
      }
      Thread.sleep(50);
    }
  }

  /** Flush and major-compact a table, and wait (bounded) until the compaction ended. */
  private Object majorCompact(String table) throws Exception {
    TableName name = TableName.valueOf(table);
    flush(table, null);
    admin.majorCompact(name);
    long started = System.currentTimeMillis();
    boolean seen = false;
    while (System.currentTimeMillis() - started < 120_000) {
      boolean running = admin.getCompactionState(name)
          != org.apache.hadoop.hbase.client.CompactionState.NONE;
      seen |= running;
      if (!running && (seen || System.currentTimeMillis() - started > 3_000)) {
        return true;
      }
      Thread.sleep(100);
    }
    throw new IOException("the major compaction of " + table + " did not end within 120 s");
  }

  /** Split the region of table holding row at (Bytes.toStringBinary form) there; returns
   * once a region of the table starts at that row (the split procedure ended, daughters
   * open), with the table's region count then. A row some region already starts at is
   * split already: answered at once, so a retried call does no second split. */
  private Object split(String table, String at) throws Exception {
    TableName name = TableName.valueOf(table);
    byte[] row = Bytes.toBytesBinary(at);
    long deadline = System.currentTimeMillis() + 120_000;
    while (!startsAt(name, row)) {
      byte[] region = null;
      for (var r : admin.getRegions(name)) {
        if (r.containsRow(row) && !r.isSplitParent() && !r.isOffline()) {
          region = r.getRegionName();
        }
      }
      if (region == null) {
        throw new IllegalArgumentException("table " + table + " has no region holding " + at);
      }
      try {
        // Admin.split only asks the master; this waits for the split procedure's end
        admin.splitRegionAsync(region, row).get(120, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        // a daughter of a split is not splittable until its references are compacted away;
        // a region in transition is not open
        String said = String.valueOf(e.getMessage());
        if (System.currentTimeMillis() > deadline
            || !(said.contains("NOT splittable") || said.contains("is not OPEN"))) {
          throw e;
        }
        Thread.sleep(200);
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("table " + table + ": no region starts at " + at
            + " 120 s after the split was asked");
      }
    }
    Map<String, Object> done = new LinkedHashMap<>();
    done.put("table", table);
    done.put("at", at);
    done.put("regions", admin.getRegions(name).size());
    return done;
  }

  private boolean startsAt(TableName name, byte[] row) throws IOException {
    for (var r : admin.getRegions(name)) {
      if (Bytes.equals(r.getStartKey(), row) && !r.isSplitParent() && !r.isOffline()) {
        return true;
      }
    }
    return false;
  }

  /** As the embedded cluster answers: {"region", "from", "to"}. */
  private Object move(String region, String server) throws IOException {
    String from = null;
    for (HRegionServer rs : servers(null)) {
      for (Region r : rs.getRegions()) {
        if (r.getRegionInfo().getEncodedName().equals(region)) {
          from = rs.getServerName().toString();
        }
      }
    }
    if (server == null) {
      admin.move(Bytes.toBytes(region));
    } else {
      admin.move(Bytes.toBytes(region), servers(server).get(0).getServerName());
    }
    util.waitUntilNoRegionsInTransition(120_000);
    for (HRegionServer rs : servers(null)) {
      for (Region r : rs.getRegions()) {
        if (r.getRegionInfo().getEncodedName().equals(region)) {
          Map<String, Object> moved = new LinkedHashMap<>();
          moved.put("region", region);
          moved.put("from", from);
          moved.put("to", rs.getServerName().toString());
          return moved;
        }
      }
    }
    throw new IOException("region " + region + " is not open anywhere after the move");
  }

  private Object kill(String server) {
    return StackSupport.kill(servers(server).get(0));
  }

  /** The active master aborted (a backup master, if any, takes over); its name. */
  private Object killMaster() {
    HMaster master = cluster().getMaster();
    if (master == null) {
      throw new IllegalStateException("no active master to kill");
    }
    return StackSupport.kill(master);
  }

  /** A new region server in the cluster, as a crashed one restarted (a new start code). */
  private Object restart() throws IOException {
    var thread = cluster().startRegionServer();
    thread.waitForServerOnline();
    return Map.of("server", thread.getRegionServer().getServerName().toString());
  }

  /** The Thrift2 gateway stopped (an outage) or started again on its port. */
  private synchronized Object service(String name, boolean running) throws Exception {
    if (!"thrift2".equals(name) || thrift2Conf == null) {
      throw new IllegalArgumentException("service " + name + ": only thrift2 stops here");
    }
    boolean changed = running == (thrift2Server == null);
    if (changed && running) {
      thrift2Server = thriftServer("thrift2", thrift2Conf);
      gateway(thrift2Server, thrift2Port, "thrift2");
      StackSupport.waitForPort(thrift2Port);
    } else if (changed) {
      stoppedGateway = thrift2Server;
      thrift2Server.getClass().getMethod("stop").invoke(thrift2Server);
      thrift2Server = null;
    }
    return Map.of("service", name, "running", running, "changed", changed);
  }

  private Object replication(boolean enabled) throws IOException {
    if (peer == null) {
      throw new IllegalStateException("this cluster has no replication peer (--replication-peer)");
    }
    if (enabled) {
      admin.enableReplicationPeer(peer);
    } else {
      admin.disableReplicationPeer(peer);
    }
    return Map.of("peer", peer, "enabled", enabled);
  }

  /** Cells as {"row","family","qualifier","timestamp"?,"value"} in Bytes.toStringBinary form,
   * written to one HFile per family and bulk loaded. */
  private Object bulkLoad(String table, org.apache.hbase.thirdparty.com.google.gson.JsonArray
      cells) throws IOException {
    Configuration conf = util.getConfiguration();
    FileSystem fs = util.getDFSCluster().getFileSystem();
    Map<String, List<Cell>> byFamily = new java.util.TreeMap<>();
    long now = System.currentTimeMillis();
    for (JsonElement e : cells) {
      JsonObject c = e.getAsJsonObject();
      byte[] family = Bytes.toBytesBinary(str(c, "family"));
      JsonElement ts = c.get("timestamp");
      byFamily.computeIfAbsent(Bytes.toStringBinary(family), k -> new ArrayList<>())
          .add(new KeyValue(Bytes.toBytesBinary(str(c, "row")), family,
              Bytes.toBytesBinary(String.valueOf(str(c, "qualifier"))),
              ts == null || ts.isJsonNull() ? now : ts.getAsLong(),
              Bytes.toBytesBinary(String.valueOf(str(c, "value")))));
    }
    org.apache.hadoop.fs.Path staging = new org.apache.hadoop.fs.Path(
        "/bulkload-" + System.nanoTime());
    for (Map.Entry<String, List<Cell>> entry : byFamily.entrySet()) {
      List<Cell> sorted = entry.getValue();
      sorted.sort(CellComparator.getInstance());
      org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(
          new org.apache.hadoop.fs.Path(staging, entry.getKey()), "hfile");
      try (HFile.Writer writer = HFile.getWriterFactoryNoCache(conf).withPath(fs, file)
          .withFileContext(new HFileContextBuilder().build()).create()) {
        for (Cell cell : sorted) {
          writer.append(cell);
        }
      }
    }
    var loaded = BulkLoadHFiles.create(conf).bulkLoad(TableName.valueOf(table), staging);
    return loaded.size();
  }
}
