/*
 * One long-lived JVM that the interop tests drive over stdin/stdout, so that a run pays for a
 * JVM start once per artifact set instead of once per mqadmin call or client. It uses only API
 * common to RocketMQ 4.9.x and 5.x (it is compiled against each set's classpath; `var` lets the
 * same source name classes whose package differs between the two).
 *
 * Protocol: one request per line, fields separated by TAB. For every request the driver writes
 * the request's output (what it printed on stdout and stderr while it ran), then a line
 * "@@END <rc>" (rc 0 = done, 1 = failed). What the JVM prints between requests goes to stderr.
 *
 *   mqadmin <arg>...                   MQAdminStartup.main0: the real mqadmin command parsing
 *   kvlist <namesrv> <namespace>       prints key=value lines (GET_KVLIST_BY_NAMESPACE)
 *   credentials <accessKey> <secretKey> | credentials -
 *                                      producers started from now on sign every request with
 *                                      the ACL RPC hook (AclClientRPCHook), or not ("-")
 *   producer <id> <namesrv> <group> <instance>          starts a DefaultMQProducer
 *   consumer <id> <namesrv> <group> <topic> <instance>  starts a DefaultMQPushConsumer
 *                                      (instance: a shared instance name, or "-" for its own)
 *   send <id> <topic> <prefix> <n> <tries>    sends bodies <prefix>-0 .. <prefix>-(n-1), each at
 *                                      most <tries> times; prints "sent <ok>/<n> retries=<r>"
 *   await <id> <prefix> <n> <ms>       waits until consumer <id> has every body <prefix>-i;
 *                                      prints "received <distinct>/<n> total=<t> unexpected=<u>"
 *   close <id>                         shuts a producer or consumer down
 *   ticker <id> <topic> <ms>           producer <id> sends one message every <ms> in the
 *                                      background until tickstop (bodies tick-<id>-<i>)
 *   tickstop <id>                      stops it; prints "ticks ok=<n> noroute=<k> other=<o>
 *                                      gap_ms=<g>" (noroute: the client found no route for the
 *                                      topic, TOPIC_NOT_EXIST; gap: the longest time between two
 *                                      acknowledged sends), then the first errors of each kind
 *   await_ticks <consumer> <ticker> <ms>  after tickstop: waits until consumer <consumer> has
 *                                      every body ticker <ticker> had acknowledged (SEND_OK);
 *                                      prints "ticks received <got>/<acked>" and the missing
 *   queues <id> <topic>                consumer <id>'s fetchSubscribeMessageQueues: prints
 *                                      "queues <n>" or "queues error <exception>"
 */
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.apache.rocketmq.tools.command.MQAdminStartup;

public class ItDriver {
    private static final Map<String, DefaultMQProducer> producers = new ConcurrentHashMap<>();
    private static final Map<String, DefaultMQPushConsumer> consumers = new ConcurrentHashMap<>();
    private static final Map<String, Ticker> tickers = new ConcurrentHashMap<>();
    private static final Map<String, Ticker> stoppedTickers = new ConcurrentHashMap<>();

    /* A producer sending on a period, counting what failed and why. */
    private static final class Ticker extends Thread {
        final DefaultMQProducer p;
        final String topic, id;
        final long ms;
        volatile boolean stop;
        int ok, noroute, other;
        long lastOkNanos, gapNanos;
        final List<String> errors = new ArrayList<>();
        final List<String> acked = new ArrayList<>();

        Ticker(DefaultMQProducer p, String id, String topic, long ms) {
            this.p = p;
            this.id = id;
            this.topic = topic;
            this.ms = ms;
            setDaemon(true);
        }

        /* A client that found no route for the topic says so in one of these ways. */
        static boolean noRoute(Throwable e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                String m = String.valueOf(t.getMessage());
                if (m.contains("No route info") || m.contains("TOPIC_NOT_EXIST")
                    || m.contains("No topic route info"))
                    return true;
            }
            return false;
        }

        public void run() {
            int i = 0;
            while (!stop) {
                String body = "tick-" + id + "-" + i++;
                try {
                    SendResult r = p.send(new Message(topic, body.getBytes(StandardCharsets.UTF_8)));
                    synchronized (this) {
                        if (r.getSendStatus() == SendStatus.SEND_OK) {
                            ok++;
                            acked.add(body);
                            long now = System.nanoTime();
                            if (lastOkNanos != 0)
                                gapNanos = Math.max(gapNanos, now - lastOkNanos);
                            lastOkNanos = now;
                        } else {
                            other++;
                        }
                    }
                } catch (Exception e) {
                    synchronized (this) {
                        boolean nr = noRoute(e);
                        if (nr)
                            noroute++;
                        else
                            other++;
                        if (errors.size() < 6)
                            errors.add((nr ? "noroute: " : "other: ") + e);
                    }
                }
                try {
                    Thread.sleep(ms);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
    /* consumer id -> body -> times delivered */
    private static final Map<String, Map<String, AtomicInteger>> received = new ConcurrentHashMap<>();
    private static int instanceSeq;
    /* what "credentials" set: the hook of the producers started next, or null */
    private static AclClientRPCHook rpcHook;
    /*
     * Route refresh period of the clients (default 30 s). A 5.x client tries one NameServer per
     * lookup; when that one is dead, the next lookup goes to the next, and this is when.
     */
    private static final int POLL_MS = 1000;
    /* the thread running the current request, watched by the unstaller */
    private static volatile Thread busy;

    /*
     * Every mqadmin subcommand ends with DefaultMQAdminExt.shutdown(), which joins the remoting
     * client's NettyEventExecutor. That thread polls its event queue for up to 3 s and only
     * sees the stop flag afterwards, so about every second command stalls for up to 3 s (in the
     * real mqadmin too, before its JVM exits). The command's work is done by then; interrupting
     * the poll ends the wait at once. A NettyEventExecutor of a live producer or consumer that
     * is interrupted just logs it and polls again.
     */
    private static void unstaller() {
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
                Thread b = busy;
                if (b == null || !inShutdownJoin(b.getStackTrace()))
                    continue;
                for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                    if (e.getKey().getName().equals("NettyEventExecutor") && polling(e.getValue()))
                        e.getKey().interrupt();
                }
            }
        }, "it-unstaller");
        t.setDaemon(true);
        t.start();
    }

    private static boolean inShutdownJoin(StackTraceElement[] st) {
        boolean join = false;
        for (StackTraceElement e : st) {
            if (e.getMethodName().equals("join"))
                join = true;
            if (join && e.getClassName().equals("org.apache.rocketmq.common.ServiceThread")
                && e.getMethodName().equals("shutdown"))
                return true;
        }
        return false;
    }

    private static boolean polling(StackTraceElement[] st) {
        for (StackTraceElement e : st) {
            if (e.getClassName().equals("java.util.concurrent.LinkedBlockingQueue")
                && e.getMethodName().equals("poll"))
                return true;
        }
        return false;
    }

    public static void main(String[] args) throws Exception {
        PrintStream reply = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out),
            true, "UTF-8");
        // Whatever the libraries print outside a request is not part of any reply.
        final PrintStream err = System.err;
        System.setOut(err);
        unstaller();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty())
                continue;
            String[] f = line.split("\t", -1);
            if (f[0].equals("quit"))
                break;
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(buf, true, "UTF-8");
            int rc = 0;
            System.setOut(out);
            System.setErr(out);
            long t0 = System.nanoTime();
            busy = Thread.currentThread();
            try {
                run(f, out);
            } catch (Throwable t) {
                rc = 1;
                out.println("driver: " + f[0] + " failed: " + t);
                t.printStackTrace(out);
            } finally {
                busy = null;
                System.setOut(err);
                System.setErr(err);
            }
            System.err.printf("driver: %s took %d ms%n", f[0] + (f.length > 1 ? " " + f[1] : ""),
                (System.nanoTime() - t0) / 1000000);
            out.flush();
            String text = buf.toString("UTF-8");
            reply.print(text);
            // Some commands print no final newline; the marker must start a line.
            if (!text.isEmpty() && !text.endsWith("\n"))
                reply.println();
            reply.println("@@END " + rc);
            reply.flush();
        }
        for (DefaultMQProducer p : producers.values())
            p.shutdown();
        for (DefaultMQPushConsumer c : consumers.values())
            c.shutdown();
        System.exit(0);
    }

    /*
     * Clients of one instance name share one MQClientInstance: one NameServer connection, one
     * route table (the default of an application, whose clients all use "DEFAULT"). "-" gives
     * the client an instance of its own.
     */
    private static String instanceName(String id, String shared) {
        if (!shared.equals("-"))
            return "it-" + shared + "-" + ProcessHandle.current().pid();
        return "it-" + id + "-" + (++instanceSeq) + "-" + ProcessHandle.current().pid();
    }

    private static void run(String[] f, PrintStream out) throws Exception {
        switch (f[0]) {
            case "mqadmin":
                MQAdminStartup.main0(Arrays.copyOfRange(f, 1, f.length), null);
                break;
            case "kvlist": {
                DefaultMQAdminExt admin = new DefaultMQAdminExt();
                admin.setInstanceName(instanceName("kv", "-"));
                admin.setNamesrvAddr(f[1]);
                admin.start();
                try {
                    var table = admin.getKVListByNamespace(f[2]);
                    for (Map.Entry<String, String> e : new TreeMap<>(table.getTable()).entrySet())
                        out.println(e.getKey() + "=" + e.getValue());
                } finally {
                    admin.shutdown();
                }
                break;
            }
            case "credentials":
                rpcHook = f[1].equals("-") ? null
                    : new AclClientRPCHook(new SessionCredentials(f[1], f[2]));
                out.println("credentials " + (rpcHook == null ? "none" : f[1]));
                break;
            case "producer": {
                DefaultMQProducer p = rpcHook == null ? new DefaultMQProducer(f[3])
                    : new DefaultMQProducer(f[3], rpcHook);
                p.setNamesrvAddr(f[2]);
                p.setInstanceName(instanceName(f[1], f[4]));
                p.setPollNameServerInterval(POLL_MS);
                p.start();
                producers.put(f[1], p);
                out.println("producer " + f[1] + " started");
                break;
            }
            case "consumer": {
                String id = f[1];
                Map<String, AtomicInteger> got = new ConcurrentHashMap<>();
                received.put(id, got);
                DefaultMQPushConsumer c = new DefaultMQPushConsumer(f[3]);
                c.setNamesrvAddr(f[2]);
                c.setInstanceName(instanceName(id, f[5]));
                c.setPollNameServerInterval(POLL_MS);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
                c.subscribe(f[4], "*");
                c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                    for (MessageExt m : msgs) {
                        String body = new String(m.getBody(), StandardCharsets.UTF_8);
                        got.computeIfAbsent(body, k -> new AtomicInteger()).incrementAndGet();
                    }
                    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
                });
                c.start();
                consumers.put(id, c);
                out.println("consumer " + id + " started");
                break;
            }
            case "send": {
                DefaultMQProducer p = producers.get(f[1]);
                String topic = f[2], prefix = f[3];
                int n = Integer.parseInt(f[4]), tries = Integer.parseInt(f[5]);
                int ok = 0, retries = 0;
                for (int i = 0; i < n; i++) {
                    byte[] body = (prefix + "-" + i).getBytes(StandardCharsets.UTF_8);
                    for (int t = 1; t <= tries; t++) {
                        try {
                            SendResult r = p.send(new Message(topic, body));
                            if (r.getSendStatus() == SendStatus.SEND_OK) {
                                ok++;
                                break;
                            }
                            out.println("send " + prefix + "-" + i + ": " + r.getSendStatus());
                        } catch (Exception e) {
                            out.println("send " + prefix + "-" + i + " try " + t + ": " + e);
                        }
                        if (t < tries) {
                            retries++;
                            Thread.sleep(500);
                        }
                    }
                }
                out.println("sent " + ok + "/" + n + " retries=" + retries);
                break;
            }
            case "await": {
                Map<String, AtomicInteger> got = received.get(f[1]);
                String prefix = f[2];
                int n = Integer.parseInt(f[3]);
                long deadline = System.currentTimeMillis() + Long.parseLong(f[4]);
                List<String> missing = new ArrayList<>();
                while (true) {
                    missing.clear();
                    for (int i = 0; i < n; i++)
                        if (!got.containsKey(prefix + "-" + i))
                            missing.add(prefix + "-" + i);
                    if (missing.isEmpty() || System.currentTimeMillis() > deadline)
                        break;
                    Thread.sleep(100);
                }
                int total = 0, unexpected = 0;
                for (Map.Entry<String, AtomicInteger> e : got.entrySet()) {
                    if (e.getKey().startsWith(prefix + "-")) {
                        total += e.getValue().get();
                    } else {
                        unexpected += e.getValue().get();
                    }
                }
                out.println("received " + (n - missing.size()) + "/" + n + " total=" + total
                    + " unexpected=" + unexpected);
                if (!missing.isEmpty())
                    out.println("missing: " + missing.subList(0, Math.min(10, missing.size())));
                break;
            }
            case "close": {
                DefaultMQProducer p = producers.remove(f[1]);
                if (p != null)
                    p.shutdown();
                DefaultMQPushConsumer c = consumers.remove(f[1]);
                if (c != null)
                    c.shutdown();
                out.println("closed " + f[1]);
                break;
            }
            case "ticker": {
                Ticker t = new Ticker(producers.get(f[1]), f[1], f[2], Long.parseLong(f[3]));
                tickers.put(f[1], t);
                t.start();
                out.println("ticker " + f[1] + " started");
                break;
            }
            case "tickstop": {
                Ticker t = tickers.remove(f[1]);
                t.stop = true;
                t.join(10000);
                stoppedTickers.put(f[1], t);
                synchronized (t) {
                    out.println("ticks ok=" + t.ok + " noroute=" + t.noroute + " other=" + t.other
                        + " gap_ms=" + t.gapNanos / 1000000);
                    for (String e : t.errors)
                        out.println(e);
                }
                break;
            }
            case "await_ticks": {
                Map<String, AtomicInteger> got = received.get(f[1]);
                Ticker t = stoppedTickers.get(f[2]);
                long deadline = System.currentTimeMillis() + Long.parseLong(f[3]);
                List<String> missing = new ArrayList<>();
                while (true) {
                    missing.clear();
                    for (String b : t.acked)
                        if (!got.containsKey(b))
                            missing.add(b);
                    if (missing.isEmpty() || System.currentTimeMillis() > deadline)
                        break;
                    Thread.sleep(100);
                }
                out.println("ticks received " + (t.acked.size() - missing.size()) + "/" + t.acked.size());
                if (!missing.isEmpty())
                    out.println("missing: " + missing.subList(0, Math.min(10, missing.size())));
                break;
            }
            case "queues": {
                try {
                    out.println("queues " + consumers.get(f[1]).fetchSubscribeMessageQueues(f[2]).size());
                } catch (Exception e) {
                    out.println("queues error " + (Ticker.noRoute(e) ? "noroute " : "") + e);
                }
                break;
            }
            default:
                throw new IllegalArgumentException("unknown request " + f[0]);
        }
    }
}
