// Writes tests/data/strings/vectors.txt: what the Java side of a RocketMQ 5.5.0 NameServer does
// with text, as test vectors for mqnamesrv's own code (tests/unit/test_utf8.c, test_json.c,
// test_properties.c). Run by tests/data/strings/make_vectors.sh against the jars of the 5.x
// artifact set (fastjson2 2.0.59, rocketmq-remoting 5.5.0) on the JDK of the machine; the
// output is committed, so the unit tests need no Java. One vector per line, fields separated
// by one space, byte strings in lower-case hex ("-" for empty):
//
//   jdk   IN OUT        new String(IN, UTF_8).getBytes(UTF_8): the JDK's decoder (malformed
//                       input -> U+FFFD), as Netty's readCharSequence and 318 bodies use it
//   fjv   IN OUT|throw  fastjson2 reading the JSON string literal IN as an extFields value of
//                       a RemotingCommand header (JSONReaderUTF8.readString); OUT as above
//                       (a lone surrogate prints as '?', U+0000 as 00)
//   fjn   IN OUT|throw  the same literal as an extFields key (readFieldName)
//   esc   IN OUT        fastjson2 writing the string whose UTF-16 units are IN (4 hex digits
//                       each) as a JSON string (JSON.toJSONBytes of a one-element array,
//                       brackets removed): the escaping of headers and bodies
//   store K V LINE      java.util.Properties.store(OutputStream) of the pair (K, V given as
//                       UTF-16 units as for esc): the line it writes, as bytes
//
// With arguments "kv IN OUT" it instead rewrites the kvConfig.json IN as the 5.5.0 NameServer
// does (KVConfigManager: file2String, KVConfigSerializeWrapper.fromJson, toJson, string2File).
import com.alibaba.fastjson2.JSON;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

public class MakeStringVectors {
    static String hex(byte[] b) {
        if (b.length == 0) return "-";
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static String units(String s) {
        if (s.isEmpty()) return "-";
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) sb.append(String.format("%04x", (int) s.charAt(i)));
        return sb.toString();
    }

    static byte[] cat(byte[]... parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) o.write(p, 0, p.length);
        return o.toByteArray();
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    // Byte strings that exercise every decision of a UTF-8 decoder: every single byte, every
    // lead byte with the continuation boundaries, and seeded random mixes.
    static List<byte[]> utf8Inputs() {
        Set<String> seen = new LinkedHashSet<>();
        List<byte[]> out = new ArrayList<>();
        int[] seconds = {0x00, 0x22, 0x41, 0x5c, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0, 0xff};
        List<byte[]> cand = new ArrayList<>();
        for (int b = 0; b < 256; b++) cand.add(new byte[] {(byte) b});
        for (int b = 0xc0; b < 256; b++) {
            for (int s : seconds) {
                cand.add(new byte[] {(byte) b, (byte) s});
                cand.add(new byte[] {(byte) b, (byte) s, (byte) 0x80});
                cand.add(new byte[] {(byte) b, (byte) s, (byte) 0x80, (byte) 0x80});
                cand.add(new byte[] {(byte) b, (byte) s, (byte) 0x41});
                cand.add(new byte[] {(byte) b, (byte) s, (byte) 0x80, (byte) 0x41});
            }
        }
        String[] named = {"eda080", "edbfbf", "eda080edb080", "eda0bdedb880", "c080", "e08080",
            "f0808080", "f4908080", "f5808080", "f888808080", "fc8480808080", "e282ac", "f09f9880",
            "c3a9", "efbfbd", "efbbbf", "e2", "e282", "f09f98", "f09f", "610062", "c0af", "e080af"};
        for (String n : named) {
            byte[] b = new byte[n.length() / 2];
            for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(n.substring(2 * i, 2 * i + 2), 16);
            cand.add(b);
        }
        int[] alphabet = {0x00, 0x20, 0x41, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0, 0xa9, 0xbf,
            0xc0, 0xc1, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xf8, 0xfe, 0xff};
        Random r = new Random(20261201L);
        for (int i = 0; i < 1500; i++) {
            byte[] b = new byte[1 + r.nextInt(8)];
            for (int j = 0; j < b.length; j++) b[j] = (byte) alphabet[r.nextInt(alphabet.length)];
            cand.add(b);
        }
        for (byte[] b : cand) if (seen.add(hex(b))) out.add(b);
        return out;
    }

    static String fastjson2(byte[] content, boolean name) {
        // '"' and '\\' end or escape a literal: the inputs keep them (the lexer's quirks around
        // them are part of what is recorded)
        byte[] json = name
            ? cat(ascii("{\"code\":1,\"extFields\":{\""), content, ascii("\":\"v\"}}"))
            : cat(ascii("{\"code\":1,\"extFields\":{\"k\":\""), content, ascii("\"}}"));
        try {
            RemotingCommand cmd = RemotingSerializable.decode(json, RemotingCommand.class);
            Map<String, String> ext = cmd.getExtFields();
            if (ext == null || ext.size() != 1) return "throw";
            String s = name ? ext.keySet().iterator().next() : ext.get("k");
            if (s == null || (!name && !ext.containsKey("k"))) return "throw";
            return hex(s.getBytes(StandardCharsets.UTF_8));
        } catch (Exception | Error e) {
            return "throw";
        }
    }

    static String fromUnits(int... u) {
        StringBuilder sb = new StringBuilder();
        for (int x : u) sb.append((char) x);
        return sb.toString();
    }

    static List<String> escapeInputs() {
        List<String> out = new ArrayList<>();
        for (int c = 0; c < 0x100; c++) out.add(fromUnits('a', c, 'b'));
        int[] more = {0x7ff, 0x800, 0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff};
        for (int c : more) out.add(fromUnits(c));
        out.add(new String(Character.toChars(0x10000)));
        out.add(new String(Character.toChars(0x1f600)));
        out.add(new String(Character.toChars(0x10ffff)));
        out.add(fromUnits(0xd800));
        out.add(fromUnits(0xdbff, 'x'));
        out.add(fromUnits('x', 0xdc00));
        out.add(fromUnits(0xdfff, 0xd800));
        out.add(fromUnits(0xd83d, 0xde00, 0xd83d));
        out.add("\"\\/<>()&'");
        out.add("");
        return out;
    }

    static String[][] storeInputs() {
        return new String[][] {
            {"k", "v"}, {"productEnvName", "x\nkvConfigPath=/srv/evil"}, {"k", "a\rb\tc\fd"},
            {"k", " lead and trail "}, {"a key", "v"}, {"k=:#!", "=:#! \\"}, {"k", "#not a comment"},
            {"k", "!not a comment"}, {"k", "caf\u00e9 \u00ff \u0100 \u20ac"}, {"k", "a\u0000b"},
            {"k", "\u007e\u007f\u0080\u009f\u00a0"}, {"k", new String(Character.toChars(0x1f600))},
            {"\u00e9", "\u2028"}, {"k", ""}, {"", "v"}, {"k", "\u0001\u001f"}, {"k", "\\u0041"},
            {"#k", "v"}, {"!k", "v"}, {" k", "v"}, {"k", "   "}, {"k", "a b"}, {"k:", "v"}};
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("kv")) {
            String content = org.apache.rocketmq.common.MixAll.file2String(args[1]);
            org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper w =
                org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper.fromJson(
                    content, org.apache.rocketmq.namesrv.kvconfig.KVConfigSerializeWrapper.class);
            org.apache.rocketmq.common.MixAll.string2FileNotSafe(w.toJson(), args[2]);
            return;
        }
        StringBuilder sb = new StringBuilder();
        List<byte[]> inputs = utf8Inputs();
        for (byte[] in : inputs)
            sb.append("jdk ").append(hex(in)).append(' ')
              .append(hex(new String(in, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8))).append('\n');
        // fastjson2: the same inputs inside a literal, alone and after an escape (an escape
        // anywhere in a literal switches fastjson2 to another decoder)
        for (String prefix : new String[] {"", "\\t"}) {
            for (byte[] in : inputs) {
                byte[] lit = cat(ascii(prefix), in, ascii("z"));
                sb.append("fjv ").append(hex(lit)).append(' ').append(fastjson2(lit, false)).append('\n');
                sb.append("fjn ").append(hex(lit)).append(' ').append(fastjson2(lit, true)).append('\n');
            }
        }
        String[] escapes = {"\\u0000", "\\u0041", "\\ud800", "\\udc00", "\\ud83d\\ude00",
            "\\ud83dx", "\\ud83d\\u0041", "\\udc00\\ud800", "\\\"", "\\\\", "\\/", "\\b\\f\\n\\r\\t",
            "\\u00e9", "\\u2028", "\\ud800\\ud800\\udc00"};
        for (String e : escapes) {
            byte[] lit = ascii(e);
            sb.append("fjv ").append(hex(lit)).append(' ').append(fastjson2(lit, false)).append('\n');
            sb.append("fjn ").append(hex(lit)).append(' ').append(fastjson2(lit, true)).append('\n');
        }
        for (String s : escapeInputs()) {
            byte[] b = JSON.toJSONBytes(new String[] {s});
            byte[] inner = java.util.Arrays.copyOfRange(b, 1, b.length - 1);
            sb.append("esc ").append(units(s)).append(' ').append(hex(inner)).append('\n');
        }
        for (String[] kv : storeInputs()) {
            Properties p = new Properties();
            p.setProperty(kv[0], kv[1]);
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            p.store(o, null);
            String text = new String(o.toByteArray(), StandardCharsets.ISO_8859_1);
            String line = text.substring(text.indexOf('\n') + 1); // after the date comment
            if (line.endsWith("\n")) line = line.substring(0, line.length() - 1);
            sb.append("store ").append(units(kv[0])).append(' ').append(units(kv[1])).append(' ')
              .append(hex(line.getBytes(StandardCharsets.ISO_8859_1))).append('\n');
        }
        System.out.print(sb);
    }
}
