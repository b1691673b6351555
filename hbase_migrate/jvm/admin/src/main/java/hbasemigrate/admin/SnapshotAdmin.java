package hbasemigrate.admin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.SnapshotDescription;
import org.apache.hadoop.hbase.client.SnapshotType;

/**
 * One admin operation on a cluster's snapshots, through HBase's client Admin API:
 *
 * <pre>
 *   SnapshotAdmin --zookeeper Q --znode-parent P snapshot TABLE NAME TTL_SECONDS
 *   ... clone NAME TABLE | restore NAME TABLE | delete NAME | list REGEX | drop TABLE
 * </pre>
 *
 * <p>On success the last line of stdout is JSON: the snapshot(s) concerned. On failure one
 * line on stderr, "ERROR Kind: message", and exit code 1.
 */
public final class SnapshotAdmin {
  private SnapshotAdmin() {}

  public static void main(String[] args) {
    Map<String, String> options = new HashMap<>();
    List<String> words = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].startsWith("--") && i + 1 < args.length) {
        options.put(args[i].substring(2), args[++i]);
      } else {
        words.add(args[i]);
      }
    }
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", options.getOrDefault("zookeeper", "127.0.0.1:2181"));
    conf.set("zookeeper.znode.parent", options.getOrDefault("znode-parent", "/hbase"));
    conf.setInt("hbase.client.retries.number",
        Integer.parseInt(options.getOrDefault("retries", "10")));
    try (Connection connection = ConnectionFactory.createConnection(conf);
        Admin admin = connection.getAdmin()) {
      System.out.println(run(admin, words));
    } catch (Exception e) {
      String message = String.valueOf(e.getMessage()).split("\n")[0];
      System.err.println("ERROR " + e.getClass().getSimpleName() + ": " + message);
      System.exit(1);
    }
  }

  private static String run(Admin admin, List<String> words) throws Exception {
    String op = words.isEmpty() ? "" : words.get(0);
    switch (op) {
      case "snapshot": {
        Map<String, Object> properties = new HashMap<>();
        properties.put("TTL", Long.parseLong(words.get(3)));
        admin.snapshot(new SnapshotDescription(words.get(2), TableName.valueOf(words.get(1)),
            SnapshotType.FLUSH, properties));
        return describe(find(admin, words.get(2)));
      }
      case "clone":
        admin.cloneSnapshot(words.get(1), TableName.valueOf(words.get(2)));
        return "{}";
      case "restore": {
        TableName table = TableName.valueOf(words.get(2));
        if (admin.isTableEnabled(table)) {
          admin.disableTable(table);
        }
        admin.restoreSnapshot(words.get(1));
        admin.enableTable(table);
        return "{}";
      }
      case "delete":
        admin.deleteSnapshot(words.get(1));
        return "{}";
      case "drop": {
        TableName table = TableName.valueOf(words.get(1));
        if (admin.isTableEnabled(table)) {
          admin.disableTable(table);
        }
        admin.deleteTable(table);
        return "{}";
      }
      case "list": {
        StringBuilder out = new StringBuilder("[");
        for (SnapshotDescription s : admin.listSnapshots(Pattern.compile(words.get(1)))) {
          out.append(out.length() > 1 ? "," : "").append(describe(s));
        }
        return out.append("]").toString();
      }
      default:
        throw new IllegalArgumentException("unknown operation '" + op
            + "' (snapshot, clone, restore, delete, list, drop)");
    }
  }

  private static SnapshotDescription find(Admin admin, String name) throws Exception {
    for (SnapshotDescription s : admin.listSnapshots(Pattern.compile(Pattern.quote(name)))) {
      if (s.getName().equals(name)) {
        return s;
      }
    }
    throw new IllegalStateException("snapshot " + name + " not listed after it was taken");
  }

  private static String describe(SnapshotDescription s) {
    return "{\"name\":\"" + s.getName() + "\",\"table\":\"" + s.getTableNameAsString()
        + "\",\"creation_time\":" + s.getCreationTime() + ",\"ttl\":" + s.getTtl() + "}";
  }
}
