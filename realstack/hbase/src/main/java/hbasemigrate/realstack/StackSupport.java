package hbasemigrate.realstack;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.Server;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.security.User;

/**
 * What the HBase 2.x launcher (this module) and the 1.x one (../hbase1, whose sources link
 * this file) share: the process around a stack, the admin endpoint's HTTP side, loopback
 * ports, and the mini cluster's region servers and WAL folders, in APIs both HBase
 * generations have. JSON stays with each launcher (2.x's Gson is HBase's shaded one).
 */
final class StackSupport {
  static final String HOST = "127.0.0.1";

  private StackSupport() {
  }

  /** A stack the launcher runs: started once, stopped by the shutdown hook. */
  interface Stack {
    void start() throws Exception;

    void stop();
  }

  /** An admin operation on the POSTed text (JSON, possibly empty); its result object. */
  interface Operations {
    Object run(String op, String body) throws Exception;
  }

  /** An admin operation nobody serves: answered 404. */
  static final class UnknownOperation extends Exception {
    UnknownOperation(String op) {
      super("unknown operation /" + op);
    }
  }

  /**
   * The launcher's process: --name value arguments, logs on stderr and only the ready line
   * on stdout (the PrintStream given to make), the stack stopped on SIGTERM, and a stack
   * that does not start ends the JVM with code 1.
   */
  static void launch(String[] args, BiFunction<Map<String, String>, PrintStream, Stack> make)
      throws InterruptedException {
    PrintStream ready = System.out;
    System.setOut(System.err);
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --name value, got " + args[i]);
      }
      options.put(args[i].substring(2), args[i + 1]);
    }
    Stack stack = make.apply(options, ready);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stack.stop();
      stopped.countDown();
    }));
    try {
      stack.start();
    } catch (Throwable e) {
      e.printStackTrace();
      System.err.println("realstack: HBase did not start: " + e);
      Runtime.getRuntime().halt(1);
    }
    stopped.await();
  }

  /** One admin request: /OP with a JSON body, answered {"result"} or {"error"} (400; 404
   * for an unknown operation), encoded by toJson. */
  static void serve(HttpExchange exchange, Operations operations,
      Function<Object, String> toJson) throws IOException {
    String op = exchange.getRequestURI().getPath().replaceAll("^/+|/+$", "");
    int code = 200;
    Object body;
    try {
      String text = "POST".equals(exchange.getRequestMethod())
          ? new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8) : "";
      body = Map.of("result", operations.run(op, text));
    } catch (UnknownOperation e) {
      code = 404;
      body = Map.of("error", e.getMessage());
    } catch (Exception e) {
      code = 400;
      body = Map.of("error", e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    byte[] data = toJson.apply(body).getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(code, data.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(data);
    }
  }

  /** Every server on loopback (HDFS's too), no web UIs; WebHDFS and replication on. */
  static void loopback(Configuration conf) {
    conf.set("hbase.master.ipc.address", HOST);
    conf.set("hbase.regionserver.ipc.address", HOST);
    conf.set("hbase.zookeeper.quorum", HOST);
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    conf.setInt("hbase.thrift.info.port", -1);
    conf.set("dfs.namenode.http-address", HOST + ":0");
    conf.set("dfs.datanode.address", HOST + ":0");
    conf.set("dfs.datanode.http.address", HOST + ":0");
    conf.set("dfs.datanode.ipc.address", HOST + ":0");
    conf.setBoolean("dfs.webhdfs.enabled", true);
    conf.setBoolean("hbase.replication", true);
  }

  /** cluster.json's keys as both stacks write them, up to hbase_version. */
  static Map<String, Object> described(HBaseTestingUtility util, String name, int thrift,
      int thrift2, String transport, String rootDir, HttpServer admin, String dir) {
    Configuration conf = util.getConfiguration();
    Map<String, Object> described = new LinkedHashMap<>();
    described.put("name", name);
    described.put("thrift", HOST + ":" + thrift);
    described.put("thrift2", HOST + ":" + thrift2);
    described.put("transport", transport);
    described.put("protocol", "binary");
    described.put("webhdfs", "http://" + HOST + ":"
        + util.getDFSCluster().getNameNode().getHttpAddress().getPort());
    if ("simple".equals(conf.get("hadoop.security.authentication", "simple"))) {
      // Hadoop RPC without SASL: the project reads the DataNodes directly
      described.put("namenode", HOST + ":" + util.getDFSCluster().getNameNodePort());
    }
    described.put("zookeeper", HOST + ":" + util.getZkCluster().getClientPort());
    described.put("znode_parent", conf.get("zookeeper.znode.parent", "/hbase"));
    described.put("hbase_root", rootDir);
    described.put("admin", "http://" + HOST + ":" + admin.getAddress().getPort());
    described.put("region_servers", liveServers(util.getMiniHBaseCluster()));
    described.put("pid", ProcessHandle.current().pid());
    described.put("dir", dir);
    described.put("hbase_version", org.apache.hadoop.hbase.util.VersionInfo.getVersion());
    return described;
  }

  /** The admin endpoint and the mini cluster stopped (errors only logged). */
  static void stop(HttpServer admin, HBaseTestingUtility util) {
    try {
      if (admin != null) {
        admin.stop(0);
      }
      if (util != null) {
        util.shutdownMiniCluster();
      }
    } catch (Throwable e) {
      System.err.println("realstack: shutdown: " + e);
    }
  }

  /**
   * Each statement through Phoenix's JDBC driver (on the class path with the module's phoenix
   * profile) against the cluster of util, committed, on a connection with the given
   * properties; a query gives its rows (each a list of column values as strings), any other
   * statement its update count.
   */
  static List<Object> sql(HBaseTestingUtility util, List<String> statements,
      Map<String, String> properties) throws java.sql.SQLException {
    String url = "jdbc:phoenix:" + HOST + ":" + util.getZkCluster().getClientPort() + ":"
        + util.getConfiguration().get("zookeeper.znode.parent", "/hbase");
    java.util.Properties info = new java.util.Properties();
    info.putAll(properties);
    List<Object> results = new ArrayList<>();
    try (java.sql.Connection connection = java.sql.DriverManager.getConnection(url, info)) {
      for (String text : statements) {
        try (java.sql.Statement statement = connection.createStatement()) {
          if (statement.execute(text)) {
            List<List<String>> rows = new ArrayList<>();
            java.sql.ResultSet found = statement.getResultSet();
            int columns = found.getMetaData().getColumnCount();
            while (found.next()) {
              List<String> row = new ArrayList<>();
              for (int i = 1; i <= columns; i++) {
                row.add(found.getString(i));
              }
              rows.add(row);
            }
            results.add(rows);
          } else {
            results.add(statement.getUpdateCount());
          }
        }
        connection.commit();
      }
    }
    return results;
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      return socket.getLocalPort();
    }
  }

  static void waitForPort(int port) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline) {
      try (Socket s = new Socket(HOST, port)) {
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new IOException("a Thrift gateway did not open port " + port);
  }

  static List<String> liveServers(MiniHBaseCluster cluster) {
    List<String> names = new ArrayList<>();
    for (var t : cluster.getLiveRegionServerThreads()) {
      names.add(t.getRegionServer().getServerName().toString());
    }
    return names;
  }

  /** A server by its name (host,port,startcode) or slot number; null = every live one. */
  static List<HRegionServer> servers(MiniHBaseCluster cluster, String which) {
    List<HRegionServer> found = new ArrayList<>();
    List<HRegionServer> all = new ArrayList<>();
    for (var t : cluster.getRegionServerThreads()) {
      all.add(t.getRegionServer());
    }
    for (int i = 0; i < all.size(); i++) {
      HRegionServer rs = all.get(i);
      boolean alive = !rs.isStopped() && !rs.isAborted();
      if (which == null ? alive
          : which.equals(String.valueOf(i)) || which.equals(rs.getServerName().toString())) {
        found.add(rs);
      }
    }
    if (which != null && found.isEmpty()) {
      throw new IllegalArgumentException("no region server " + which + "; servers: "
          + liveServers(cluster));
    }
    return found;
  }

  /** The WAL folders being split (WALs/*-splitting under root), sorted. */
  static List<String> splitting(FileSystem fs, Path root) throws IOException {
    Path wals = new Path(root, "WALs");
    List<String> names = new ArrayList<>();
    if (fs.exists(wals)) {
      for (FileStatus st : fs.listStatus(wals)) {
        if (st.getPath().getName().endsWith("-splitting")) {
          names.add(st.getPath().getName());
        }
      }
    }
    names.sort(null);
    return names;
  }

  /**
   * A secured mini cluster runs every server as the one Kerberos user, so they share one
   * cached FileSystem; the test utility's hook that closes a stopped region server's
   * FileSystem (MiniHBaseClusterRegionServer's shutdownThread) would close it under the
   * master and the other servers (their calls then fail with "Filesystem closed"). A killed
   * process leaves the others' clients open: the hook is unset before a kill.
   */
  private static void keepSharedFileSystem(HRegionServer rs) {
    if (!(rs instanceof MiniHBaseCluster.MiniHBaseClusterRegionServer)
        || !User.isHBaseSecurityEnabled(rs.getConfiguration())) {
      return;
    }
    try {
      java.lang.reflect.Field hook =
          MiniHBaseCluster.MiniHBaseClusterRegionServer.class.getDeclaredField("shutdownThread");
      hook.setAccessible(true);
      hook.set(rs, null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot keep the shared FileSystem open: " + e, e);
    }
  }

  /** The region server (or master) aborted, waited for (60 s at most) to stop; its name. */
  static String kill(Server rs) {
    String name = rs.getServerName().toString();
    if (rs instanceof HRegionServer) {
      keepSharedFileSystem((HRegionServer) rs);
    }
    rs.abort("killed by the realstack admin endpoint", null);  // 1.x has only this one
    long deadline = System.currentTimeMillis() + 60_000;
    while (!rs.isStopped() && System.currentTimeMillis() < deadline) {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return name;
  }
}
