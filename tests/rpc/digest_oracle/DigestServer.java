import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.PasswordCallback;
import javax.security.sasl.AuthorizeCallback;
import javax.security.sasl.RealmCallback;
import javax.security.sasl.Sasl;
import javax.security.sasl.SaslServer;

/**
 * Java's own DIGEST-MD5 server (com.sun.security.sasl.digest), made as HBase's servers make it
 * (no protocol, server name "default"), answering on stdin/stdout in frames of an int32-BE
 * length and bytes: the exchange, then a line of what was agreed, then for each wrapped token
 * the client sends, the unwrapped message reversed and wrapped back (an empty frame ends it).
 *
 * <p>Arguments: the password (as the client's callback gives it: the token password in
 * base64) and the QOP list offered ("auth-conf,auth-int,auth").
 */
public final class DigestServer {
  public static void main(String[] args) throws Exception {
    DataInputStream in = new DataInputStream(System.in);
    DataOutputStream out = new DataOutputStream(System.out);
    Map<String, String> props = new HashMap<>();
    props.put(Sasl.QOP, args[1]);
    SaslServer server = Sasl.createSaslServer("DIGEST-MD5", null, "default", props,
        callbacks -> {
          for (Callback cb : callbacks) {
            if (cb instanceof PasswordCallback) {
              ((PasswordCallback) cb).setPassword(args[0].toCharArray());
            } else if (cb instanceof AuthorizeCallback) {
              AuthorizeCallback ac = (AuthorizeCallback) cb;
              ac.setAuthorized(ac.getAuthenticationID().equals(ac.getAuthorizationID()));
              ac.setAuthorizedID(ac.getAuthorizationID());
            } else if (!(cb instanceof NameCallback) && !(cb instanceof RealmCallback)) {
              throw new IllegalStateException("callback " + cb);
            }
          }
        });
    while (!server.isComplete()) {
      byte[] challenge = server.evaluateResponse(read(in));
      write(out, challenge);
    }
    String agreed = server.getNegotiatedProperty(Sasl.QOP) + " "
        + server.getNegotiatedProperty(Sasl.STRENGTH) + " "
        + server.getAuthorizationID();
    write(out, agreed.getBytes(StandardCharsets.UTF_8));
    while (true) {
      byte[] token = read(in);
      if (token.length == 0) {
        break;
      }
      byte[] message = server.unwrap(token, 0, token.length);
      byte[] reversed = new byte[message.length];
      for (int i = 0; i < message.length; i++) {
        reversed[i] = message[message.length - 1 - i];
      }
      write(out, reversed.length == 0 ? new byte[0] : server.wrap(reversed, 0, reversed.length));
    }
  }

  private static byte[] read(DataInputStream in) throws Exception {
    byte[] data = new byte[in.readInt()];
    in.readFully(data);
    return data;
  }

  private static void write(DataOutputStream out, byte[] data) throws Exception {
    out.writeInt(data.length);
    out.write(data);
    out.flush();
  }
}
