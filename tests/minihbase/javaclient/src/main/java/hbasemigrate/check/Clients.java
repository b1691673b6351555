package hbasemigrate.check;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/** A connection of HBase's client to a cluster found through ZooKeeper, retrying briefly. */
final class Clients {
  private Clients() {
  }

  /** Connects through {@code quorum} (host:port) under znode {@code parent}. */
  static Connection connect(String quorum, String parent) throws IOException {
    return ConnectionFactory.createConnection(configuration(quorum, parent));
  }

  /** The client's settings for {@code quorum} (host:port) and znode {@code parent}. */
  static Configuration configuration(String quorum, String parent) {
    String[] where = quorum.split(":");
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", where[0]);
    conf.set("hbase.zookeeper.property.clientPort", where[1]);
    conf.set("zookeeper.znode.parent", parent);
    conf.setInt("hbase.client.retries.number", 6);
    conf.setInt("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 20000);
    conf.setInt("hbase.client.operation.timeout", 60000);
    return conf;
  }

  /** Creates table {@code name} of {@code families}, split at {@code split}. */
  static void create(Admin admin, TableName name, byte[] split,
      ColumnFamilyDescriptor... families) throws IOException {
    TableDescriptorBuilder table = TableDescriptorBuilder.newBuilder(name);
    for (ColumnFamilyDescriptor family : families) {
      table.setColumnFamily(family);
    }
    admin.createTable(table.build(), new byte[][] {split});
  }
}
