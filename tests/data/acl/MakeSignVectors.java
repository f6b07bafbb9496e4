/*
 * Prints the signature vectors of tests/data/acl/sign_vectors.txt: each case is a request that
 * RocketMQ's own AclClientRPCHook signs (the hook mqadmin, clients and 5.x brokers use), printed
 * as the ext fields it then carries (sorted, Signature apart), the body and the secret key, all
 * hex but the signature. Run once per artifact set (the 5.5.0 and the 4.9.8 client must agree):
 *
 *   cp=$(mvn -q -f tests/interop/java/5.x/pom.xml dependency:build-classpath \
 *        -Dmdep.outputFile=/dev/stdout)
 *   java -cp "$cp" tests/data/acl/MakeSignVectors.java | grep -v -e "|-" -e "^$" \
 *       > tests/data/acl/sign_vectors.txt
 *
 * (the same with tests/interop/java/4.9-client/pom.xml prints the same file).
 */
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

public class MakeSignVectors {
    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b)
            sb.append(String.format("%02x", x & 0xff));
        return sb.length() == 0 ? "-" : sb.toString();
    }

    static String hex(String s) {
        return hex(s.getBytes(StandardCharsets.UTF_8));
    }

    /* code: request code; kv: ext field key, value, key, value...; token may be null */
    static void emit(String name, int code, String ak, String sk, String token, byte[] body,
        String... kv) throws Exception {
        // RemotingCommand has the same package in 4.9.x and 5.x.
        RemotingCommand cmd = RemotingCommand.createRequestCommand(code, null);
        for (int i = 0; i < kv.length; i += 2)
            cmd.addExtField(kv[i], kv[i + 1]);
        if (body != null)
            cmd.setBody(body);
        SessionCredentials cred = token == null ? new SessionCredentials(ak, sk)
            : new SessionCredentials(ak, sk, token);
        new AclClientRPCHook(cred).doBeforeRequest("127.0.0.1:9876", cmd);
        Map<String, String> ext = cmd.getExtFields();
        System.out.println("case " + name);
        System.out.println("code " + code);
        System.out.println("sk " + hex(sk));
        // Insertion order on the wire does not matter to the signature; print sorted.
        for (Map.Entry<String, String> e : new TreeMap<>(ext).entrySet()) {
            if (!e.getKey().equals("Signature"))
                System.out.println("ext " + hex(e.getKey()) + " " + hex(e.getValue()));
        }
        System.out.println("body " + (body == null ? "-" : hex(body)));
        System.out.println("sig " + ext.get("Signature"));
        System.out.println("end");
    }

    public static void main(String[] args) throws Exception {
        System.out.println("# Made by tests/data/acl/MakeSignVectors.java with RocketMQ's AclClientRPCHook;");
        System.out.println("# hex UTF-8 of keys, values, secret and body ('-' = empty); sig as sent.");
        emit("put-kv-config", 100, "rocketmq2", "12345678", null, null,
            "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicA", "value", "broker-a:4");
        emit("update-config-with-token", 318, "RocketMQ", "1234567890", "sessionTokenXYZ",
            "orderMessageEnable=true\n".getBytes(StandardCharsets.UTF_8));
        byte[] bin = new byte[700];
        for (int i = 0; i < bin.length; i++)
            bin[i] = (byte) (i * 7);
        emit("register-binary-body", 103, "broker-ak", "broker-secret", null, bin,
            "brokerName", "broker-a", "brokerAddr", "127.0.0.1:10911", "clusterName", "DefaultCluster",
            "haServerAddr", "127.0.0.1:10912", "brokerId", "0", "compressed", "false", "bodyCrc32", "123456789");
        emit("only-access-key", 105, "reader01", "readersecret", null, null);
        emit("empty-values", 205, "admin001", "adminsecret", null, new byte[0],
            "brokerName", "", "zz", "", "A", "");
        emit("utf8-and-utf16-order", 100, "\u00e9t\u00e9-key", "s\u00e9cr\u00e8t-\u4e2d\u6587", null,
            "\u00e9\u00e0\ud83d\ude00".getBytes(StandardCharsets.UTF_8),
            "\uff21", "fullwidth-A", "\ud83d\ude00", "emoji-key", "a", "\u4e2d\u6587", "B", "Caf\u00e9");
        // U+0000 and a lone surrogate in values: Java signs their UTF-8 (0x00, and '?').
        emit("nul-and-lone-surrogate", 100, "nulTester", "nulSecret1", null, null,
            "namespace", "a\u0000b", "key", "x\ud800y", "value", "\u0000");
        StringBuilder longKey = new StringBuilder();
        for (int i = 0; i < 100; i++)
            longKey.append((char) ('a' + i % 26));
        emit("long-secret", 216, "long-secret-ak", longKey.toString(), null, null,
            "topic", "TopicToDelete", "clusterName", "c1");
    }
}
