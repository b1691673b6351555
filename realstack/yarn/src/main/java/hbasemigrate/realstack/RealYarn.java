package hbasemigrate.realstack;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * A real YARN for Spark, one role per JVM as on a cluster.
 *
 * <p>--role resourcemanager --dir D [--queues a,b]: a mini HDFS (one DataNode) for the
 * applications' staging files and Hadoop's MiniYARNCluster with a ResourceManager (the
 * capacity scheduler, its leaf queues a,b) and no NodeManager; when it serves it writes D/conf
 * (core-site.xml, hdfs-site.xml, yarn-site.xml: what HADOOP_CONF_DIR names) and prints one
 * JSON line on stdout. SIGTERM stops YARN, then HDFS.
 *
 * <p>--role nodemanager --dir D --conf D/conf [--memory-mb M] [--vcores V]: one NodeManager
 * of the ResourceManager that conf names, its folders in D, whose containers are processes of
 * their own (the default container executor runs launch_container.sh); once registered it
 * prints one JSON line (its node id, web address and folders). Each NodeManager is a JVM of
 * its own: the web applications of YARN's daemons share a static Guice filter, so two in one
 * JVM answer each other's REST paths.
 */
public final class RealYarn {
  private RealYarn() {}

  public static void main(String[] args) throws Exception {
    PrintStream ready = System.out;
    System.setOut(System.err);
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    if ("nodemanager".equals(options.get("role"))) {
      nodeManager(options, ready);
      return;
    }
    long started = System.currentTimeMillis();
    Path dir = Paths.get(options.get("dir")).toAbsolutePath();
    String queues = options.getOrDefault("queues", "default");
    MiniDFSCluster[] hdfs = {null};
    MiniYARNCluster[] yarn = {null};
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        if (yarn[0] != null) {
          yarn[0].stop();
        }
        if (hdfs[0] != null) {
          hdfs[0].shutdown();
        }
      } finally {
        stopped.countDown();
      }
    }));
    try {
      Configuration dfsConf = new Configuration();
      dfsConf.set("hadoop.tmp.dir", dir.resolve("tmp").toString());
      dfsConf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, dir.resolve("hdfs").toString());
      dfsConf.set("dfs.namenode.rpc-bind-host", "127.0.0.1");
      dfsConf.set("dfs.datanode.address", "127.0.0.1:0");
      dfsConf.set("dfs.datanode.http.address", "127.0.0.1:0");
      dfsConf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
      dfsConf.set("dfs.namenode.http-address", "127.0.0.1:0");
      hdfs[0] = new MiniDFSCluster.Builder(dfsConf).numDataNodes(1).build();
      hdfs[0].waitActive();
      String defaultFs = hdfs[0].getFileSystem().getUri().toString();
      // the staging folders of Spark's applications: /user/<name>, world-writable /tmp
      FileSystem fs = hdfs[0].getFileSystem();
      fs.mkdirs(new org.apache.hadoop.fs.Path("/tmp"), new FsPermission((short) 01777));
      fs.setPermission(new org.apache.hadoop.fs.Path("/tmp"), new FsPermission((short) 01777));
      fs.mkdirs(new org.apache.hadoop.fs.Path("/user"), new FsPermission((short) 0777));
      fs.setPermission(new org.apache.hadoop.fs.Path("/user"), new FsPermission((short) 0777));

      YarnConfiguration conf = new YarnConfiguration();
      conf.set("fs.defaultFS", defaultFs);
      conf.set("hadoop.tmp.dir", dir.resolve("tmp").toString());
      conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
      // Spark's application master (client mode: ExecutorLauncher) beside its executors
      conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
      conf.set("yarn.scheduler.capacity.root.queues", queues);
      String[] names = queues.split(",");
      for (int i = 0; i < names.length; i++) {
        int share = 100 / names.length + (i == 0 ? 100 % names.length : 0);
        conf.setInt("yarn.scheduler.capacity.root." + names[i] + ".capacity", share);
        conf.setInt("yarn.scheduler.capacity.root." + names[i] + ".maximum-capacity", 100);
      }
      // the scheduler may place an application's containers on any node at once
      conf.setInt("yarn.scheduler.capacity.node-locality-delay", -1);
      // MiniYARNCluster's folders are under target/ of the working folder: the launcher's
      // working folder is D
      yarn[0] = new MiniYARNCluster("yarn", 1, 0, 1, 1);
      yarn[0].init(conf);
      yarn[0].start();
      Configuration live = yarn[0].getConfig();
      long deadline = System.currentTimeMillis() + 60_000;
      while (live.get(YarnConfiguration.RM_ADDRESS).endsWith(":0")) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("the ResourceManager never told its address");
        }
        Thread.sleep(100);
      }
      Path confDir = dir.resolve("conf");
      Files.createDirectories(confDir);
      Configuration core = new Configuration(false);
      core.set("fs.defaultFS", defaultFs);
      write(core, confDir.resolve("core-site.xml"));
      write(new Configuration(false), confDir.resolve("hdfs-site.xml"));
      Configuration site = new Configuration(false);
      for (Map.Entry<String, String> e : live) {
        if (e.getKey().startsWith("yarn.resourcemanager.")
            || e.getKey().startsWith("yarn.scheduler.")) {
          site.set(e.getKey(), live.get(e.getKey()));
        }
      }
      write(site, confDir.resolve("yarn-site.xml"));

      String web = "http://" + WebAppUtils.getRMWebAppURLWithoutScheme(live);
      StringBuilder json = new StringBuilder("{");
      json.append(quote("resourcemanager")).append(':')
          .append(quote(live.get(YarnConfiguration.RM_ADDRESS))).append(',');
      json.append(quote("web")).append(':').append(quote(web)).append(',');
      json.append(quote("hdfs")).append(':').append(quote(defaultFs)).append(',');
      json.append(quote("hadoop_conf_dir")).append(':').append(quote(confDir.toString()))
          .append(',');
      json.append(quote("queues")).append(":[");
      for (int i = 0; i < names.length; i++) {
        json.append(i > 0 ? "," : "").append(quote(names[i]));
      }
      json.append("],").append(quote("hadoop_version")).append(':')
          .append(quote(VersionInfo.getVersion())).append(',');
      json.append(quote("pid")).append(':').append(ProcessHandle.current().pid()).append(',');
      json.append(quote("dir")).append(':').append(quote(dir.toString())).append(',');
      json.append(quote("started_in_ms")).append(':')
          .append(System.currentTimeMillis() - started).append('}');
      ready.println(json);
      ready.flush();
    } catch (Throwable e) {
      e.printStackTrace();
      System.err.println("realstack: YARN did not start: " + e);
      Runtime.getRuntime().halt(1);
    }
    stopped.await();
  }

  /** One NodeManager of the ResourceManager --conf names, until SIGTERM. */
  private static void nodeManager(Map<String, String> options, PrintStream ready)
      throws Exception {
    Path dir = Paths.get(options.get("dir")).toAbsolutePath();
    Path confDir = Paths.get(options.get("conf"));
    // permissions of localized files and containers' folders set in the JVM, not by chmod
    org.apache.hadoop.conf.Configuration.addDefaultResource("realstack-nodemanager.xml");
    YarnConfiguration conf = new YarnConfiguration();
    conf.addResource(new org.apache.hadoop.fs.Path(confDir.resolve("core-site.xml").toUri()));
    conf.addResource(new org.apache.hadoop.fs.Path(confDir.resolve("yarn-site.xml").toUri()));
    conf.set("hadoop.tmp.dir", dir.resolve("tmp").toString());
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, dir.resolve("local").toString());
    conf.set(YarnConfiguration.NM_LOG_DIRS, dir.resolve("logs").toString());
    conf.set(YarnConfiguration.NM_ADDRESS, "localhost:0");
    conf.set(YarnConfiguration.NM_LOCALIZER_ADDRESS, "localhost:0");
    conf.set(YarnConfiguration.NM_WEBAPP_ADDRESS, "localhost:0");
    conf.set(YarnConfiguration.NM_COLLECTOR_SERVICE_ADDRESS, "localhost:0");
    conf.setInt(YarnConfiguration.NM_PMEM_MB,
        Integer.parseInt(options.getOrDefault("memory-mb", "4096")));
    conf.setInt(YarnConfiguration.NM_VCORES,
        Integer.parseInt(options.getOrDefault("vcores", "4")));
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    // a busy shared disk must not turn the NodeManager's folders bad
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.9f);
    // the containers' folders and logs stay for a while after they end, to be read
    conf.setLong(YarnConfiguration.DEBUG_NM_DELETE_DELAY_SEC, 600);
    NodeManager nm = new NodeManager();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        nm.stop();
      } finally {
        stopped.countDown();
      }
    }));
    try {
      nm.init(conf);
      nm.start();
      String json = "{" + quote("node_id") + ":" + quote(nm.getNMContext().getNodeId().toString())
          + "," + quote("web") + ":" + quote("http://localhost:" + nm.getNMContext().getHttpPort())
          + "," + quote("local_dirs") + ":" + quote(dir.resolve("local").toString())
          + "," + quote("log_dirs") + ":" + quote(dir.resolve("logs").toString())
          + "," + quote("pid") + ":" + ProcessHandle.current().pid() + "}";
      ready.println(json);
      ready.flush();
    } catch (Throwable e) {
      e.printStackTrace();
      System.err.println("realstack: the NodeManager did not start: " + e);
      Runtime.getRuntime().halt(1);
    }
    stopped.await();
  }

  private static void write(Configuration conf, Path file) throws Exception {
    File partial = new File(file + ".tmp");
    try (OutputStream out = new FileOutputStream(partial)) {
      conf.writeXml(out);
    }
    Files.move(partial.toPath(), file, StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
