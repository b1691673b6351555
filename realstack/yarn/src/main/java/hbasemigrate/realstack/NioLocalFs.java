package hbasemigrate.realstack;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.local.LocalConfigKeys;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * The local file system of a NodeManager, its permissions set through java.nio.
 *
 * <p>Without Hadoop's native library, RawLocalFileSystem sets a permission by running
 * {@code chmod}: a process per file. A NodeManager sets one on every file it localizes (each
 * file of an unpacked archive) and on each container's folders, so a test's Spark
 * applications made it start about 20,000 of them. This is RawLocalFileSystem with
 * setPermission done in the JVM (a sticky bit, which java.nio cannot set, still by
 * {@code chmod}), named by {@code fs.AbstractFileSystem.file.impl} (FileContext, what the
 * NodeManager's localizer and container executor use) and {@code fs.file.impl} in
 * realstack-nodemanager.xml, a default resource of the NodeManager's JVM.
 */
public final class NioLocalFs extends ChecksumFs {
  public NioLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(uri, conf));
  }

  /** FileContext's raw local file system over {@link NioRawLocalFileSystem}. */
  static final class Raw extends DelegateToFileSystem {
    Raw(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(uri, new NioRawLocalFileSystem(), conf, "file", false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1;
    }

    @Override
    public FsServerDefaults getServerDefaults(Path f) throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    @SuppressWarnings("deprecation")
    public FsServerDefaults getServerDefaults() throws IOException {
      return LocalConfigKeys.getServerDefaults();
    }

    @Override
    public boolean isValidName(String src) {
      return true;
    }
  }

  /** FileSystem's checksummed local file system over {@link NioRawLocalFileSystem}. */
  public static final class Checked extends LocalFileSystem {
    public Checked() {
      super(new NioRawLocalFileSystem());
    }
  }

  /** RawLocalFileSystem, its setPermission through java.nio. */
  public static final class NioRawLocalFileSystem extends RawLocalFileSystem {
    private static final PosixFilePermission[] BITS = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_READ};

    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      short mode = permission.toShort();
      if ((mode & ~0777) != 0) {
        super.setPermission(p, permission);
        return;
      }
      Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
      for (int bit = 0; bit < BITS.length; bit++) {
        if ((mode & (1 << bit)) != 0) {
          set.add(BITS[bit]);
        }
      }
      Files.setPosixFilePermissions(pathToFile(p).toPath(), set);
    }
  }
}
