import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.ControllerConfig;
import org.apache.rocketmq.common.JraftConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.body.SyncStateSet;
import org.apache.rocketmq.remoting.protocol.header.controller.AlterSyncStateSetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.ElectMasterRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.GetMetaDataResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.GetReplicaInfoRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.admin.CleanControllerBrokerDataRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.ApplyBrokerIdRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.GetNextBrokerIdRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.controller.register.RegisterBrokerToControllerRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.namesrv.BrokerHeartbeatRequestHeader;

/**
 * Golden answers of the Java 5.5.0 embedded controller (tests/interop/controller/README.md).
 *
 * <pre>
 *   CtlGolden record one|three OUT.jsonl DIR n0=ADDR[,PID] [n1=ADDR,PID n2=ADDR,PID]
 *   CtlGolden props FILE      what java.util.Properties reads from FILE, one "key=value" a line
 *   CtlGolden print FILE      ControllerConfig and JraftConfig as NamesrvStartup -p fills them
 * </pre>
 *
 * "record" drives a scripted sequence against running Java NameServers with
 * enableControllerInNamesrv=true and writes every step (the request as sent: code, flag, ext
 * fields, body; the reply: code, remark, ext fields, body) as one JSON object a line. Requests
 * are built from the 5.5.0 header classes (so their ext fields are what a broker or mqadmin
 * sends) or, for bad input, from raw ext fields. Addresses become placeholders (${n0}, ${L1},
 * ${dir}) so that ctl_replay.py can send the same file to any controller group. The fake
 * brokers ${L1}.. are sockets of this program that record what the controller sends them
 * (NOTIFY_BROKER_ROLE_CHANGED, 1008).
 */
public class CtlGolden {
    // ---- placeholders ------------------------------------------------------------------------
    static final Map<String, String> PH = new LinkedHashMap<>(); // real text -> placeholder
    static String leaderId, leaderAddr;

    static String ph(String s) {
        if (s == null) {
            return null;
        }
        for (Map.Entry<String, String> e : PH.entrySet()) {
            s = s.replace(e.getKey(), e.getValue());
        }
        return s;
    }

    static String unph(String s) {
        for (Map.Entry<String, String> e : PH.entrySet()) {
            s = s.replace(e.getValue(), e.getKey());
        }
        return s;
    }

    // ---- output ---------------------------------------------------------------------------------
    static PrintWriter out;
    static int stepNo;

    static void emit(JSONObject o) {
        out.println(JSON.toJSONString(o));
        out.flush();
        System.err.println("step " + o.getString("name") + ": "
            + (o.containsKey("reply") ? o.getJSONObject("reply").toJSONString() : o.toJSONString()));
    }

    static JSONObject bodyJson(JSONObject o, byte[] body) {
        if (body == null) {
            return o;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .decode(java.nio.ByteBuffer.wrap(body)).toString();
            o.put("body", ph(text));
        } catch (CharacterCodingException e) {
            o.put("body_b64", Base64.getEncoder().encodeToString(body));
        }
        return o;
    }

    static JSONObject cmdJson(RemotingCommand c, boolean reply) {
        JSONObject o = new JSONObject();
        o.put("code", c.getCode());
        if (!reply) {
            o.put("flag", c.getFlag());
        }
        if (c.getRemark() != null) {
            o.put("remark", ph(c.getRemark()));
        }
        if (c.getExtFields() != null) {
            JSONObject e = new JSONObject();
            for (Map.Entry<String, String> f : new TreeMap<>(c.getExtFields()).entrySet()) {
                String v = f.getValue();
                if (reply && f.getKey().equals("controllerLeaderId") && v.equals(leaderId)) {
                    v = "${leader_id}";
                } else if (reply && f.getKey().equals("controllerLeaderAddress") && v.equals(leaderAddr)) {
                    v = "${leader}";
                }
                e.put(f.getKey(), ph(v));
            }
            o.put("ext", e);
        }
        return bodyJson(o, c.getBody());
    }

    // ---- connections: one remoting client per simulated peer ---------------------------------
    static final Map<String, NettyRemotingClient> CONNS = new HashMap<>();
    static final Map<String, String> NODES = new LinkedHashMap<>(); // n0 -> ip:port
    static final Map<String, Long> PIDS = new HashMap<>();

    static NettyRemotingClient conn(String name) {
        return CONNS.computeIfAbsent(name, n -> {
            NettyRemotingClient c = new NettyRemotingClient(new NettyClientConfig());
            c.start();
            return c;
        });
    }

    static void closeConn(String name) {
        NettyRemotingClient c = CONNS.remove(name);
        if (c != null) {
            c.shutdown();
        }
        JSONObject o = new JSONObject();
        o.put("name", "close " + name);
        o.put("op", "close");
        o.put("conn", name);
        emit(o);
    }

    /** "leader", "follower" (the first node that is not the leader) or a node id. */
    static String resolve(String node) throws Exception {
        if (node.equals("leader") || node.equals("follower")) {
            findLeader(60);
            if (node.equals("leader")) {
                return NODES.get(leaderId);
            }
            for (Map.Entry<String, String> e : NODES.entrySet()) {
                if (!e.getKey().equals(leaderId) && PIDS.get(e.getKey()) != -1L) {
                    return e.getValue();
                }
            }
            throw new IllegalStateException("no follower");
        }
        return NODES.get(node);
    }

    /** Asks every live node for 1005 until one says isLeader=true and also serves 1012. */
    static void findLeader(int secs) throws Exception {
        long deadline = System.currentTimeMillis() + secs * 1000L;
        while (System.currentTimeMillis() < deadline) {
            for (Map.Entry<String, String> e : NODES.entrySet()) {
                if (PIDS.getOrDefault(e.getKey(), 0L) == -1L) {
                    continue;
                }
                try {
                    RemotingCommand r = conn("probe").invokeSync(e.getValue(),
                        RemotingCommand.createRequestCommand(RequestCode.CONTROLLER_GET_METADATA_INFO, null), 3000);
                    GetMetaDataResponseHeader h = r.decodeCommandCustomHeader(GetMetaDataResponseHeader.class);
                    if (Boolean.TRUE.equals(h.isLeader())) {
                        RemotingCommand p = conn("probe").invokeSync(e.getValue(), RemotingCommand.createRequestCommand(
                            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID, new GetNextBrokerIdRequestHeader("probe", "probe")), 3000);
                        if (p.getCode() == 0) {
                            leaderId = e.getKey();
                            leaderAddr = e.getValue();
                            return;
                        }
                    }
                } catch (Exception ignored) {
                    // not up yet
                }
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("no leader within " + secs + " s");
    }

    // ---- requests ---------------------------------------------------------------------------------
    static class Req {
        String name;
        String conn = "adm";
        String node = "leader";
        int code;
        CommandCustomHeader header;
        Map<String, String> ext; // raw ext fields instead of a header class
        byte[] body;
        boolean oneway;
        JSONObject until; // poll until the reply matches
        int pollSecs = 30;
        JSONObject expect; // sanity check of Java's own reply (the script says what it tests)

        Req(String name, int code) {
            this.name = name;
            this.code = code;
        }

        Req conn(String c) {
            conn = c;
            return this;
        }

        Req node(String n) {
            node = n;
            return this;
        }

        Req hdr(CommandCustomHeader h) {
            header = h;
            return this;
        }

        Req ext(String... kv) {
            ext = new LinkedHashMap<>();
            for (int i = 0; i < kv.length; i += 2) {
                ext.put(kv[i], unph(kv[i + 1]));
            }
            return this;
        }

        Req noExt() {
            ext = null;
            header = null;
            return this;
        }

        Req body(String text) {
            body = unph(text).getBytes(StandardCharsets.UTF_8);
            return this;
        }

        Req oneway() {
            oneway = true;
            return this;
        }

        Req until(String json) {
            until = JSON.parseObject(json);
            return this;
        }

        Req pollSecs(int s) {
            pollSecs = s;
            return this;
        }

        Req expect(String json) {
            expect = JSON.parseObject(json);
            return this;
        }

        RemotingCommand build() {
            RemotingCommand r = RemotingCommand.createRequestCommand(code, header);
            if (ext != null) {
                for (Map.Entry<String, String> e : ext.entrySet()) {
                    r.addExtField(e.getKey(), e.getValue());
                }
            }
            if (body != null) {
                r.setBody(body);
            }
            if (oneway) {
                r.markOnewayRPC();
            }
            r.makeCustomHeaderToNet();
            return r;
        }
    }

    /** A reply satisfies a condition: {"code": N, "remark": "...", "ext": {k: v}, "ext_absent":
     * [k], "body_contains": "..."} (values with placeholders). ctl_replay.py reads the same. */
    static boolean matches(JSONObject cond, JSONObject reply) {
        if (cond == null) {
            return true;
        }
        if (cond.containsKey("code") && cond.getIntValue("code") != reply.getIntValue("code")) {
            return false;
        }
        if (cond.containsKey("remark") && !cond.getString("remark").equals(reply.getString("remark"))) {
            return false;
        }
        JSONObject ext = reply.getJSONObject("ext");
        if (cond.containsKey("ext")) {
            for (Map.Entry<String, Object> e : cond.getJSONObject("ext").entrySet()) {
                if (ext == null || !String.valueOf(e.getValue()).equals(ext.getString(e.getKey()))) {
                    return false;
                }
            }
        }
        if (cond.containsKey("ext_absent")) {
            for (Object k : cond.getJSONArray("ext_absent")) {
                if (ext != null && ext.containsKey((String) k)) {
                    return false;
                }
            }
        }
        if (cond.containsKey("body_contains")) {
            String b = reply.getString("body");
            if (b == null || !b.contains(cond.getString("body_contains"))) {
                return false;
            }
        }
        return true;
    }

    static JSONObject send(Req q) throws Exception {
        String addr = resolve(q.node);
        long deadline = System.currentTimeMillis() + q.pollSecs * 1000L;
        JSONObject reply = null;
        RemotingCommand request;
        do {
            request = q.build();
            if (q.oneway) {
                conn(q.conn).invokeOneway(addr, request, 3000);
                break;
            }
            RemotingCommand r = conn(q.conn).invokeSync(addr, request, 10000);
            reply = cmdJson(r, true);
            if (q.until == null || matches(q.until, reply)) {
                break;
            }
            Thread.sleep(200);
        } while (System.currentTimeMillis() < deadline);
        JSONObject o = new JSONObject();
        o.put("name", q.name);
        o.put("conn", q.conn);
        o.put("node", q.node);
        if (q.until != null) {
            o.put("op", "poll");
            o.put("until", q.until);
            o.put("timeout", q.pollSecs);
            if (!matches(q.until, reply)) {
                throw new IllegalStateException("poll " + q.name + " never matched: " + reply);
            }
        }
        JSONObject req = cmdJson(request, false);
        req.remove("remark");
        o.put("req", req);
        if (q.oneway) {
            o.put("oneway", true);
        } else {
            o.put("reply", reply);
        }
        if (q.expect != null) {
            if (!matches(q.expect, reply)) {
                throw new IllegalStateException("step " + q.name + ": Java answered " + reply
                    + ", the script expects " + q.expect);
            }
            o.put("expect", q.expect);
        }
        emit(o);
        return reply;
    }

    static void sleep(String why, long ms) throws InterruptedException {
        Thread.sleep(ms);
        JSONObject o = new JSONObject();
        o.put("name", why);
        o.put("op", "sleep");
        o.put("ms", ms);
        emit(o);
    }

    // ---- keepalive: a broker's heartbeats every second -----------------------------------------
    static final ScheduledExecutorService TIMER = Executors.newScheduledThreadPool(2);
    static final Map<String, java.util.concurrent.ScheduledFuture<?>> KEEPALIVE = new HashMap<>();

    static void keepalive(String conn, Req hb) throws Exception {
        String addr = resolve(hb.node);
        KEEPALIVE.put(conn, TIMER.scheduleAtFixedRate(() -> {
            try {
                conn(conn).invokeOneway(addr, hb.build(), 3000);
            } catch (Exception e) {
                System.err.println("keepalive " + conn + ": " + e);
            }
        }, 0, 1000, TimeUnit.MILLISECONDS));
        JSONObject o = new JSONObject();
        o.put("name", "keepalive " + conn);
        o.put("op", "keepalive");
        o.put("conn", conn);
        o.put("node", hb.node);
        o.put("every_ms", 1000);
        JSONObject req = cmdJson(hb.build(), false);
        req.remove("remark");
        o.put("req", req);
        emit(o);
    }

    static void keepaliveStop(String conn) {
        KEEPALIVE.remove(conn).cancel(false);
        JSONObject o = new JSONObject();
        o.put("name", "keepalive stop " + conn);
        o.put("op", "keepalive_stop");
        o.put("conn", conn);
        emit(o);
    }

    // ---- fake brokers: record what the controller sends them -----------------------------------
    static class Listener {
        final String label;
        final ServerSocket ss;
        final List<JSONObject> frames = Collections.synchronizedList(new ArrayList<>());

        Listener(String label) throws IOException {
            this.label = label;
            ss = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
            PH.put("127.0.0.1:" + ss.getLocalPort(), "${" + label + "}");
            Thread t = new Thread(this::acceptLoop, "listener-" + label);
            t.setDaemon(true);
            t.start();
        }

        String addr() {
            return "${" + label + "}";
        }

        void acceptLoop() {
            while (true) {
                try {
                    Socket s = ss.accept();
                    Thread t = new Thread(() -> readLoop(s));
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        void readLoop(Socket s) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()))) {
                while (true) {
                    int total = in.readInt();
                    byte[] rest = new byte[total];
                    in.readFully(rest);
                    int hv = ((rest[0] & 0xff) << 24) | ((rest[1] & 0xff) << 16) | ((rest[2] & 0xff) << 8) | (rest[3] & 0xff);
                    int hlen = hv & 0xffffff;
                    JSONObject f = new JSONObject();
                    f.put("serialize_type", hv >>> 24);
                    JSONObject h = JSON.parseObject(new String(rest, 4, hlen, StandardCharsets.UTF_8));
                    h.remove("opaque");
                    JSONObject ext = h.getJSONObject("extFields");
                    if (ext != null) {
                        JSONObject e2 = new JSONObject();
                        for (String k : new TreeMap<>(ext).keySet()) {
                            e2.put(k, ph(ext.getString(k)));
                        }
                        h.put("extFields", e2);
                    }
                    f.put("header", h);
                    bodyJson(f, total - 4 - hlen > 0 ? Arrays.copyOfRange(rest, 4 + hlen, total) : null);
                    frames.add(f);
                }
            } catch (IOException e) {
                // closed
            }
        }

        /** Waits up to secs for count frames, records them as an "expect_notify" step. */
        void expect(String name, int count, int secs) throws InterruptedException {
            long deadline = System.currentTimeMillis() + secs * 1000L;
            while (frames.size() < count && System.currentTimeMillis() < deadline) {
                Thread.sleep(100);
            }
            Thread.sleep(1500); // and nothing more arrives
            JSONObject o = new JSONObject();
            o.put("name", name);
            o.put("op", "notify");
            o.put("listener", label);
            JSONArray a = new JSONArray();
            synchronized (frames) {
                a.addAll(frames);
                frames.clear();
            }
            o.put("frames", a);
            if (a.size() != count) {
                throw new IllegalStateException(name + ": " + a.size() + " frames at " + label + ", expected " + count);
            }
            emit(o);
        }
    }

    // ---- builders of what brokers and mqadmin send ----------------------------------------------
    static Req nextId(String name, String conn, String cluster, String broker) {
        return new Req(name, RequestCode.CONTROLLER_GET_NEXT_BROKER_ID).conn(conn)
            .hdr(new GetNextBrokerIdRequestHeader(cluster, broker));
    }

    static Req applyId(String name, String conn, String cluster, String broker, long id, String checkCode) {
        return new Req(name, RequestCode.CONTROLLER_APPLY_BROKER_ID).conn(conn)
            .hdr(new ApplyBrokerIdRequestHeader(cluster, broker, id, unph(checkCode)));
    }

    static Req register(String name, String conn, String cluster, String broker, long id, String addr) {
        return new Req(name, RequestCode.CONTROLLER_REGISTER_BROKER).conn(conn)
            .hdr(new RegisterBrokerToControllerRequestHeader(cluster, broker, id, unph(addr)));
    }

    static Req heartbeat(String name, String conn, String cluster, String broker, long id, String addr,
        long timeoutMs, int epoch, long maxOffset, int priority) {
        BrokerHeartbeatRequestHeader h = new BrokerHeartbeatRequestHeader();
        h.setClusterName(cluster);
        h.setBrokerName(broker);
        h.setBrokerAddr(unph(addr));
        h.setBrokerId(id);
        h.setEpoch(epoch);
        h.setMaxOffset(maxOffset);
        h.setConfirmOffset(maxOffset);
        h.setHeartbeatTimeoutMills(timeoutMs);
        h.setElectionPriority(priority);
        return new Req(name, RequestCode.BROKER_HEARTBEAT).conn(conn).hdr(h).oneway();
    }

    static Req elect(String name, String conn, ElectMasterRequestHeader h) {
        return new Req(name, RequestCode.CONTROLLER_ELECT_MASTER).conn(conn).hdr(h);
    }

    static Req replicaInfo(String name, String conn, String broker) {
        return new Req(name, RequestCode.CONTROLLER_GET_REPLICA_INFO).conn(conn)
            .hdr(new GetReplicaInfoRequestHeader(broker));
    }

    static Req alter(String name, String conn, String broker, long master, int masterEpoch, String sssJson) {
        return new Req(name, RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET).conn(conn)
            .hdr(new AlterSyncStateSetRequestHeader(broker, master, masterEpoch)).body(sssJson);
    }

    static Req syncStateData(String name, String bodyJson) {
        Req q = new Req(name, RequestCode.CONTROLLER_GET_SYNC_STATE_DATA);
        if (bodyJson != null) {
            q.body(bodyJson);
        }
        return q;
    }

    static Req clean(String name, String cluster, String broker, String ids, boolean living) {
        return new Req(name, RequestCode.CLEAN_BROKER_DATA)
            .hdr(new CleanControllerBrokerDataRequestHeader(cluster, broker, ids, living));
    }

    static Req metadata(String name, String node) {
        return new Req(name, RequestCode.CONTROLLER_GET_METADATA_INFO).node(node);
    }

    /** SyncStateSet's own encoding, as the master broker builds the 1001 body. */
    static String sss(long[] ids, int epoch) {
        LinkedHashSet<Long> s = new LinkedHashSet<>();
        for (long id : ids) {
            s.add(id);
        }
        return new String(new SyncStateSet(s, epoch).encode(), StandardCharsets.UTF_8);
    }

    // ---- the scripted sequences ---------------------------------------------------------------
    static final String C = "cluster1";
    static final String B = "broker1";

    /** One node: ControllerManagerTest.testSomeApi's flow, then every error path reachable. */
    static void scenarioOne(Listener l1, Listener l2, Listener l3) throws Exception {
        send(nextId("wait for leadership (1012 answers)", "adm", "probe", "probe").until("{\"code\":0}"));
        send(metadata("1005 metadata", "n0").expect("{\"code\":0,\"ext\":{\"isLeader\":\"true\"}}"));

        // registration of two brokers: 1012, 1013, 1003 each (RM.register)
        String cc1 = l1.addr() + ";1700000000001";
        String cc2 = l2.addr() + ";1700000000002";
        send(nextId("1012 first id of a new set", "b1", C, B).expect("{\"code\":0,\"ext\":{\"nextBrokerId\":\"1\"}}"));
        send(applyId("1013 apply id 1", "b1", C, B, 1, cc1).expect("{\"code\":0}"));
        send(register("1003 register id 1 (no master yet)", "b1", C, B, 1, l1.addr()).expect("{\"code\":0}"));
        send(nextId("1012 next id after one", "b2", C, B).expect("{\"ext\":{\"nextBrokerId\":\"2\"}}"));
        send(applyId("1013 apply id 2", "b2", C, B, 2, cc2).expect("{\"code\":0}"));
        send(register("1003 register id 2", "b2", C, B, 2, l2.addr()).expect("{\"code\":0}"));

        // heartbeats (oneway, as brokers send them), one as a request to see its answer
        send(heartbeat("904 heartbeat b1", "b1", C, B, 1, l1.addr(), 60000, 0, 100, Integer.MAX_VALUE));
        send(heartbeat("904 heartbeat b2", "b2", C, B, 2, l2.addr(), 60000, 0, 100, Integer.MAX_VALUE));
        Req hbReq = heartbeat("904 heartbeat b2 as a request", "b2", C, B, 2, l2.addr(), 60000, 0, 100,
            Integer.MAX_VALUE);
        hbReq.oneway = false;
        send(hbReq.expect("{\"code\":0}"));
        send(new Req("904 without brokerId", RequestCode.BROKER_HEARTBEAT).conn("b2")
            .ext("clusterName", C, "brokerName", B, "brokerAddr", l2.addr()).expect("{\"code\":2005}"));
        send(new Req("904 without any field", RequestCode.BROKER_HEARTBEAT).conn("adm").noExt());

        // elect: the first broker wins (first election), the second finds it
        send(elect("1002 broker 1 elects itself", "b1", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 1L))
            .expect("{\"code\":0,\"ext\":{\"masterBrokerId\":\"1\",\"masterEpoch\":\"1\",\"syncStateSetEpoch\":\"1\"}}"));
        l1.expect("1008 to broker 1 after the election", 1, 10);
        l2.expect("1008 to broker 2 after the election", 1, 10);
        send(elect("1002 broker 2 finds the master", "b2", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 2L))
            .expect("{\"code\":2011}"));
        send(replicaInfo("1004 master 1", "b2", B).expect("{\"code\":0,\"ext\":{\"masterBrokerId\":\"1\"}}"));
        send(register("1003 again: master named", "b2", C, B, 2, l2.addr()).expect("{\"code\":0,\"ext\":{\"masterBrokerId\":\"1\"}}"));
        send(syncStateData("1006 one set", "[\"broker1\"]").expect("{\"code\":0}"));
        send(syncStateData("1006 unknown set", "[\"nosuch\"]").expect("{\"code\":0}"));
        send(syncStateData("1006 empty list", "[]"));
        send(syncStateData("1006 without body", null));
        send(syncStateData("1006 body not JSON", "broker1"));

        // a third broker registered but never alive
        String cc3 = l3.addr() + ";1700000000003";
        send(nextId("1012 third id", "b3", C, B).expect("{\"ext\":{\"nextBrokerId\":\"3\"}}"));
        send(applyId("1013 apply id 3", "b3", C, B, 3, cc3).expect("{\"code\":0}"));
        send(register("1003 register id 3", "b3", C, B, 3, l3.addr()).expect("{\"code\":0}"));

        // 1001: every error path, in RIM's order, then success
        send(alter("1001 unknown set", "b1", "nosuch", 1, 1, sss(new long[] {1, 2}, 1)).expect("{\"code\":2013}"));
        send(alter("1001 same set", "b1", B, 1, 1, sss(new long[] {1}, 1)).expect("{\"code\":2013}"));
        send(alter("1001 not the master", "b2", B, 2, 1, sss(new long[] {1, 2}, 1)).expect("{\"code\":2002}"));
        send(alter("1001 old master epoch", "b1", B, 1, 0, sss(new long[] {1, 2}, 1)).expect("{\"code\":2000}"));
        send(alter("1001 old set epoch", "b1", B, 1, 1, sss(new long[] {1, 2}, 0)).expect("{\"code\":2001}"));
        send(alter("1001 unknown replica", "b1", B, 1, 1, sss(new long[] {1, 9}, 1)).expect("{\"code\":2003}"));
        send(alter("1001 dead replica", "b1", B, 1, 1, sss(new long[] {1, 3}, 1)).expect("{\"code\":2006}"));
        send(alter("1001 without the master", "b1", B, 1, 1, sss(new long[] {2}, 1)).expect("{\"code\":2013}"));
        send(alter("1001 grow to {1,2}", "b1", B, 1, 1, sss(new long[] {1, 2}, 1))
            .expect("{\"code\":0,\"ext\":{\"newSyncStateSetEpoch\":\"2\"}}"));
        send(alter("1001 without body", "b1", B, 1, 1, "").noExt().hdr(new AlterSyncStateSetRequestHeader(B, 1L, 1)));
        send(replicaInfo("1004 after the alter", "b1", B).expect("{\"code\":0}"));
        send(syncStateData("1006 after the alter", "[\"broker1\",\"nosuch\"]").expect("{\"code\":0}"));

        // 1002: error paths
        send(elect("1002 unknown set", "adm", ElectMasterRequestHeader.ofBrokerTrigger(C, "nosuch", 1L)).expect("{\"code\":2010}"));
        send(elect("1002 admin designates a dead broker", "adm", ElectMasterRequestHeader.ofAdminTrigger(C, B, 3L))
            .expect("{\"code\":2012}"));
        send(elect("1002 admin designates the master", "adm", ElectMasterRequestHeader.ofAdminTrigger(C, B, 1L))
            .expect("{\"code\":2011}"));
        send(elect("1002 controller-style trigger (-1), master alive", "adm", ElectMasterRequestHeader.ofControllerTrigger(B))
            .expect("{\"code\":2011}"));
        send(new Req("1002 without fields", RequestCode.CONTROLLER_ELECT_MASTER).noExt());
        send(new Req("1002 brokerId not a number", RequestCode.CONTROLLER_ELECT_MASTER)
            .ext("clusterName", C, "brokerName", B, "brokerId", "x", "designateElect", "false"));

        // 1003, 1013, 1012, 1004 error paths and idempotent retries
        send(register("1003 unknown set", "adm", C, "nosuch", 1, l1.addr()).expect("{\"code\":2010}"));
        send(register("1003 unknown id", "adm", C, B, 9, l1.addr()).expect("{\"code\":2010}"));
        send(register("1003 changed address", "b3", C, B, 3, "127.0.0.1:1").expect("{\"code\":0}"));
        send(syncStateData("1006 shows the new address", "[\"broker1\"]").expect("{\"body_contains\":\"127.0.0.1:1\"}"));
        send(register("1003 address back", "b3", C, B, 3, l3.addr()).expect("{\"code\":0}"));
        send(applyId("1013 unknown set, id 2", "adm", C, "nosuch", 2, cc1).expect("{\"code\":2014}"));
        send(applyId("1013 id taken", "adm", C, B, 1, cc2).expect("{\"code\":2014}"));
        send(applyId("1013 retry with the same check code", "b1", C, B, 1, cc1).expect("{\"code\":0}"));
        send(nextId("1012 after the retry", "adm", C, B));
        send(new Req("1013 without registerCheckCode", RequestCode.CONTROLLER_APPLY_BROKER_ID)
            .ext("clusterName", C, "brokerName", B, "appliedBrokerId", "4"));
        send(new Req("1012 without fields", RequestCode.CONTROLLER_GET_NEXT_BROKER_ID).noExt());
        send(replicaInfo("1004 unknown set", "adm", "nosuch").expect("{\"code\":2008}"));
        send(new Req("1004 without brokerName", RequestCode.CONTROLLER_GET_REPLICA_INFO).noExt());
        send(new Req("1003 without fields", RequestCode.CONTROLLER_REGISTER_BROKER).noExt());
        send(new Req("1003 without brokerId", RequestCode.CONTROLLER_REGISTER_BROKER)
            .ext("clusterName", C, "brokerName", B, "brokerAddress", l1.addr()));
        send(new Req("1003 without brokerAddress", RequestCode.CONTROLLER_REGISTER_BROKER)
            .ext("clusterName", C, "brokerName", B, "brokerId", "1"));
        send(new Req("1013 new set without appliedBrokerId", RequestCode.CONTROLLER_APPLY_BROKER_ID)
            .ext("clusterName", C, "brokerName", "nosuch", "registerCheckCode", l1.addr() + ";1"));
        send(new Req("1013 known set without appliedBrokerId", RequestCode.CONTROLLER_APPLY_BROKER_ID)
            .ext("clusterName", C, "brokerName", B, "registerCheckCode", l1.addr() + ";1"));
        send(new Req("1013 check code of only ';'", RequestCode.CONTROLLER_APPLY_BROKER_ID)
            .ext("clusterName", C, "brokerName", B, "appliedBrokerId", "9", "registerCheckCode", ";"));
        send(new Req("1001 without masterEpoch", RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET)
            .ext("brokerName", B, "masterBrokerId", "1").body(sss(new long[] {1, 2, 3}, 2)));
        send(new Req("1001 body without the set", RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET)
            .ext("brokerName", B, "masterBrokerId", "1", "masterEpoch", "1").body("{}"));
        send(new Req("1001 body not JSON", RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET)
            .ext("brokerName", B, "masterBrokerId", "1", "masterEpoch", "1").body("x"));
        send(new Req("1001 without fields", RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET).noExt()
            .body(sss(new long[] {1, 2}, 2)));

        // 1009, 1010, unknown codes
        send(new Req("1010 config", RequestCode.GET_CONTROLLER_CONFIG).expect("{\"code\":0}"));
        send(new Req("1009 blacklisted key", RequestCode.UPDATE_CONTROLLER_CONFIG).body("configStorePath=/tmp/x\n")
            .expect("{\"code\":16}"));
        send(new Req("1009 rocketmqHome (fixed blacklist)", RequestCode.UPDATE_CONTROLLER_CONFIG).body("rocketmqHome=/tmp/x\n")
            .expect("{\"code\":16}"));
        send(new Req("1009 without body", RequestCode.UPDATE_CONTROLLER_CONFIG).expect("{\"code\":0}"));
        send(new Req("1005 unknown code 105", RequestCode.GET_ROUTEINFO_BY_TOPIC).ext("topic", "T").expect("{\"code\":3}"));
        send(new Req("unknown code 1007", 1007).expect("{\"code\":3}"));
        send(new Req("unknown code 1014", 1014).expect("{\"code\":3}"));

        // 1011: error paths, then a clean
        send(clean("1011 unknown set", C, "nosuch", null, false).expect("{\"code\":2009}"));
        send(clean("1011 whole set with a master", C, B, null, false).expect("{\"code\":2009}"));
        send(clean("1011 a living broker", C, B, "2", false).expect("{\"code\":2009}"));
        send(clean("1011 ids not numbers", C, B, "a;b", false).expect("{\"code\":2009}"));
        send(clean("1011 unknown set, living allowed", C, "nosuch", "1;2", true).expect("{\"code\":2009}"));

        // broker 1 (the master) goes silent, broker 2 keeps beating: the scan expires it and the
        // controller elects 2 (in the SyncStateSet); both live brokers get 1008 (only 2 is live)
        keepalive("b2", heartbeat("hb b2", "b2", C, B, 2, l2.addr(), 60000, 1, 200, Integer.MAX_VALUE));
        send(heartbeat("904 b1 last heartbeat, 3 s timeout", "b1", C, B, 1, l1.addr(), 3000, 1, 200, Integer.MAX_VALUE));
        send(replicaInfo("1004 until master 2", "b2", B).until("{\"code\":0,\"ext\":{\"masterBrokerId\":\"2\"}}"));
        l2.expect("1008 to broker 2 after the failover", 1, 10);
        l1.expect("no 1008 to the silent broker 1", 0, 1);
        send(replicaInfo("1004 master 2, epoch 2", "b2", B).expect("{\"code\":0,\"ext\":{\"masterEpoch\":\"2\"}}"));
        send(syncStateData("1006 after the failover", "[\"broker1\"]"));
        send(clean("1011 dead broker 3", C, B, "3", false).expect("{\"code\":0}"));
        send(syncStateData("1006 without broker 3", "[\"broker1\"]"));
        send(nextId("1012 after the clean (ids are not reused)", "adm", C, B).expect("{\"ext\":{\"nextBrokerId\":\"4\"}}"));

        // broker 2's connection closes: the controller finds no one alive to elect; each failed
        // controller election still writes an event (masterEpoch + 1, up to 3 tries)
        keepaliveStop("b2");
        closeConn("b2");
        send(replicaInfo("1004 until no master", "adm", B).until("{\"code\":0,\"ext_absent\":[\"masterBrokerId\"]}"));
        sleep("the controller's retries run out", 12000);
        send(replicaInfo("1004 no master, epoch after the failed elections", "adm", B));
        send(syncStateData("1006 with no master", "[\"broker1\"]"));

        // broker 1 comes back: not in the SyncStateSet {2}, so it cannot be elected cleanly
        send(heartbeat("904 b1 is back", "b1", C, B, 1, l1.addr(), 60000, 1, 300, Integer.MAX_VALUE));
        send(elect("1002 broker 1, unclean off", "b1", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 1L)).expect("{\"code\":2012}"));
        send(new Req("1009 enableElectUncleanMaster=true", RequestCode.UPDATE_CONTROLLER_CONFIG)
            .body("enableElectUncleanMaster=true\n").expect("{\"code\":0}"));
        send(elect("1002 broker 1, unclean on", "b1", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 1L)).expect("{\"code\":0}"));
        l1.expect("1008 to broker 1 after the unclean election", 1, 10);
        send(new Req("1010 config after the update", RequestCode.GET_CONTROLLER_CONFIG).expect("{\"code\":0}"));

        // a second set whose master never heartbeats: the leader's inactive-master scan re-elects
        String cc4 = l3.addr() + ";1700000000004";
        String cc5 = l2.addr() + ";1700000000005";
        send(applyId("1013 set broker2, id 1", "b4", C, "broker2", 1, cc4).expect("{\"code\":0}"));
        send(register("1003 set broker2, id 1", "b4", C, "broker2", 1, l3.addr()).expect("{\"code\":0}"));
        send(applyId("1013 set broker2, id 2", "b5", C, "broker2", 2, cc5).expect("{\"code\":0}"));
        send(register("1003 set broker2, id 2", "b5", C, "broker2", 2, l2.addr()).expect("{\"code\":0}"));
        send(elect("1002 broker2: id 1 first (liveness not checked)", "b4", ElectMasterRequestHeader.ofBrokerTrigger(C, "broker2", 1L))
            .expect("{\"code\":0}"));
        keepalive("b5", heartbeat("hb b5", "b5", C, "broker2", 2, l2.addr(), 60000, 1, 10, Integer.MAX_VALUE));
        send(replicaInfo("1004 until the scan elects id 2", "b5", "broker2")
            .until("{\"code\":0,\"ext\":{\"masterBrokerId\":\"2\"}}"));
        l2.expect("1008 to broker2's id 2 after the scan", 1, 10);
        keepaliveStop("b5");
        closeConn("b5");

        // cleaning: living brokers allowed, then the whole set
        send(clean("1011 ids 1;2 of broker2, living allowed", C, "broker2", "1;2", true).expect("{\"code\":0}"));
        send(replicaInfo("1004 broker2 gone", "adm", "broker2").expect("{\"code\":2008}"));
        send(clean("1011 whole set broker1, living allowed", C, B, null, true).expect("{\"code\":0}"));
        send(replicaInfo("1004 broker1 gone", "adm", B).expect("{\"code\":2008}"));
        send(nextId("1012 fresh set after the clean", "adm", C, B).expect("{\"ext\":{\"nextBrokerId\":\"1\"}}"));
    }

    /** Three nodes: who answers what, a follower's 2007s, the leader killed and its state kept. */
    static void scenarioThree(Listener l1, Listener l2) throws Exception {
        send(nextId("wait for a leader (1012 answers)", "adm", "probe", "probe").until("{\"code\":0}"));
        for (String n : NODES.keySet()) {
            send(metadata("1005 from " + n, n).expect("{\"code\":0}"));
        }
        String cc1 = l1.addr() + ";1700000000011";
        String cc2 = l2.addr() + ";1700000000012";
        send(nextId("1012 on the leader", "b1", C, B).expect("{\"code\":0}"));
        send(applyId("1013 on the leader", "b1", C, B, 1, cc1).expect("{\"code\":0}"));
        send(register("1003 on the leader", "b1", C, B, 1, l1.addr()).expect("{\"code\":0}"));
        send(applyId("1013 id 2 on the leader", "b2", C, B, 2, cc2).expect("{\"code\":0}"));
        send(register("1003 id 2 on the leader", "b2", C, B, 2, l2.addr()).expect("{\"code\":0}"));
        // brokers heartbeat to every controller
        for (String n : NODES.keySet()) {
            send(heartbeat("904 b1 to " + n, "b1", C, B, 1, l1.addr(), 60000, 0, 1, Integer.MAX_VALUE).node(n));
            send(heartbeat("904 b2 to " + n, "b2", C, B, 2, l2.addr(), 60000, 0, 1, Integer.MAX_VALUE).node(n));
        }
        send(elect("1002 on the leader", "b1", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 1L)).expect("{\"code\":0}"));
        l1.expect("1008 to broker 1", 1, 10);
        l2.expect("1008 to broker 2", 1, 10);
        send(alter("1001 on the leader", "b1", B, 1, 1, sss(new long[] {1, 2}, 1)).expect("{\"code\":0}"));

        // a follower: reads of its own (1005, 1010, 904) and 2007 for the rest
        send(nextId("1012 on a follower", "f", C, B).node("follower").expect("{\"code\":2007}"));
        send(applyId("1013 on a follower", "f", C, B, 3, l1.addr() + ";1").node("follower").expect("{\"code\":2007}"));
        send(register("1003 on a follower", "f", C, B, 1, l1.addr()).node("follower").expect("{\"code\":2007}"));
        send(elect("1002 on a follower", "f", ElectMasterRequestHeader.ofBrokerTrigger(C, B, 1L)).node("follower")
            .expect("{\"code\":2007}"));
        send(replicaInfo("1004 on a follower", "f", B).node("follower").expect("{\"code\":2007}"));
        send(alter("1001 on a follower", "f", B, 1, 1, sss(new long[] {1}, 2)).node("follower").expect("{\"code\":2007}"));
        send(syncStateData("1006 on a follower", "[\"broker1\"]").node("follower").conn("f").expect("{\"code\":2007}"));
        send(clean("1011 on a follower", C, B, "2", true).node("follower").conn("f").expect("{\"code\":2007}"));
        send(syncStateData("1006 empty body on a follower", null).node("follower").conn("f"));
        Req hb = heartbeat("904 as a request on a follower", "f", C, B, 2, l2.addr(), 60000, 0, 1, Integer.MAX_VALUE)
            .node("follower");
        hb.oneway = false;
        send(hb.expect("{\"code\":0}"));
        send(new Req("1010 on a follower", RequestCode.GET_CONTROLLER_CONFIG).node("follower").conn("f").expect("{\"code\":0}"));

        // the leader dies: another node leads with the same state
        String old = leaderId;
        long pid = PIDS.get(old);
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        PIDS.put(old, -1L);
        Thread.sleep(1000);
        JSONObject k = new JSONObject();
        k.put("name", "kill the leader");
        k.put("op", "kill");
        k.put("node", "leader");
        emit(k);
        leaderId = null;
        send(nextId("wait for a new leader", "adm2", "probe", "probe").conn("adm2").until("{\"code\":0}").pollSecs(60));
        send(metadata("1005 from the new leader", "leader").conn("adm2").expect("{\"code\":0}"));
        send(metadata("1005 from the other survivor", "follower").conn("adm2").expect("{\"code\":0}"));
        send(replicaInfo("1004 on the new leader", "adm2", B).expect("{\"code\":0,\"ext\":{\"masterBrokerId\":\"1\"}}"));
        send(syncStateData("1006 on the new leader", "[\"broker1\"]").conn("adm2"));
        send(nextId("1012 on the new leader", "adm2", C, B).expect("{\"ext\":{\"nextBrokerId\":\"3\"}}"));
    }

    // ---- props / print ---------------------------------------------------------------------------
    static Properties load(String file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = new BufferedInputStream(new FileInputStream(file))) {
            p.load(in);
        }
        return p;
    }

    static void printFields(PrintWriter w, Object o) throws Exception {
        for (Field f : o.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) || f.getName().startsWith("this")) {
                continue;
            }
            f.setAccessible(true);
            Object v = f.get(o);
            w.println(f.getName() + "=" + (v == null ? "" : v));
        }
    }

    public static void main(String[] args) throws Exception {
        PrintWriter stdout = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        switch (args[0]) {
            case "props": {
                Properties p = load(args[1]);
                for (Object key : new TreeMap<>(p).keySet()) {
                    stdout.println(key + "=" + p.getProperty((String) key));
                }
                return;
            }
            case "print": {
                Properties p = load(args[1]);
                ControllerConfig cc = new ControllerConfig();
                JraftConfig jc = new JraftConfig();
                cc.setJraftConfig(jc);
                MixAll.properties2Object(p, cc);
                MixAll.properties2Object(p, jc);
                printFields(stdout, cc);
                stdout.println("-- JraftConfig");
                printFields(stdout, jc);
                return;
            }
            case "record":
                break;
            default:
                throw new IllegalArgumentException("usage: record|props|print");
        }
        String scenario = args[1];
        out = new PrintWriter(new OutputStreamWriter(new FileOutputStream(args[2]), StandardCharsets.UTF_8));
        PH.put(args[3], "${dir}");
        for (int i = 4; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            String[] ap = kv[1].split(",");
            NODES.put(kv[0], ap[0]);
            PIDS.put(kv[0], ap.length > 1 ? Long.parseLong(ap[1]) : 0L);
            PH.put(ap[0], "${" + kv[0] + "}");
        }
        out.println("# Golden answers of the Java 5.5.0 embedded controller (NamesrvStartup with");
        out.println("# enableControllerInNamesrv=true), scenario " + scenario + ", " + NODES.size()
            + " node(s); recorded by tests/interop/controller/record.sh, replayed by ctl_replay.py.");
        Listener l1 = new Listener("L1");
        Listener l2 = new Listener("L2");
        Listener l3 = new Listener("L3");
        try {
            if (scenario.equals("one")) {
                scenarioOne(l1, l2, l3);
            } else {
                scenarioThree(l1, l2);
            }
        } finally {
            out.close();
            TIMER.shutdownNow();
            for (NettyRemotingClient c : CONNS.values()) {
                c.shutdown();
            }
        }
        System.exit(0);
    }
}
