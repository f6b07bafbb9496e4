import apache.rocketmq.v2.Address;
import apache.rocketmq.v2.AddressScheme;
import apache.rocketmq.v2.Assignment;
import apache.rocketmq.v2.Endpoints;
import apache.rocketmq.v2.MessageQueue;
import apache.rocketmq.v2.MessagingServiceGrpc;
import apache.rocketmq.v2.QueryAssignmentRequest;
import apache.rocketmq.v2.QueryAssignmentResponse;
import apache.rocketmq.v2.QueryRouteRequest;
import apache.rocketmq.v2.QueryRouteResponse;
import apache.rocketmq.v2.Resource;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.shaded.grpc.netty.NettyChannelBuilder;
import org.apache.rocketmq.shaded.io.grpc.ManagedChannel;
import org.apache.rocketmq.shaded.io.grpc.Metadata;
import org.apache.rocketmq.shaded.io.grpc.stub.MetadataUtils;

/**
 * The Java gRPC client (rocketmq-client-java 5.x) through a RocketMQ 5.x Proxy in cluster mode
 * (tests/interop/run_proxy.sh). The Proxy finds its brokers through the NameServer under test.
 *
 * <pre>
 *   GrpcClient &lt;proxy host:port&gt; &lt;normal topic&gt; &lt;fifo topic&gt; &lt;normal group&gt; &lt;fifo group&gt; &lt;n&gt;
 *              [&lt;topic whose route is only queried&gt; ...]
 * </pre>
 *
 * Prints "RESULT pass|fail &lt;check&gt;" lines (one check each in the suite) and the Proxy's
 * answers, normalized (the Proxy's own port becomes "proxy"), as "ROUTE ..." and "ASSIGN ..."
 * lines that the suite compares between the run against mqnamesrv and the one against the Java
 * NameServer. The route and assignment queries are raw gRPC calls (the client's generated stubs),
 * because the client API does not show them; producing and consuming use the client API.
 * Besides the simple consumers, a push consumer of the group "&lt;normal group&gt;_push" (which the
 * suite creates) receives every NORMAL body too: it finds its queues through QueryAssignment and
 * its own rebalancing, where a simple consumer only receives.
 */
public final class GrpcClient {
    private static String host;
    private static int port;

    private GrpcClient() {
    }

    private static void result(boolean ok, String what) {
        System.out.println("RESULT " + (ok ? "pass " : "fail ") + what);
        System.out.flush();
    }

    private static Endpoints proxyEndpoints() {
        return Endpoints.newBuilder().setScheme(AddressScheme.IPv4)
            .addAddresses(Address.newBuilder().setHost(host).setPort(port)).build();
    }

    private static String endpoints(Endpoints e) {
        List<String> addrs = new ArrayList<>();
        for (Address a : e.getAddressesList()) {
            String s = a.getHost() + ":" + a.getPort();
            addrs.add(s.equals(host + ":" + port) ? "proxy" : s);
        }
        Collections.sort(addrs);
        return e.getScheme() + "/" + String.join(",", addrs);
    }

    private static String queue(MessageQueue q) {
        List<String> types = new ArrayList<>();
        q.getAcceptMessageTypesList().forEach(t -> types.add(t.name()));
        Collections.sort(types);
        return "queue=" + q.getId() + " perm=" + q.getPermission() + " broker=" + q.getBroker().getName()
            + " brokerId=" + q.getBroker().getId() + " endpoints=" + endpoints(q.getBroker().getEndpoints())
            + " accepts=" + String.join(",", types);
    }

    /** QueryRoute and QueryAssignment as a gRPC client sends them; prints normalized lines. */
    private static void rawQueries(String[] topics, String[] groups) throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
        try {
            Metadata h = new Metadata();
            h.put(Metadata.Key.of("x-mq-client-id", Metadata.ASCII_STRING_MARSHALLER), "it-raw-" + UUID.randomUUID());
            h.put(Metadata.Key.of("x-mq-language", Metadata.ASCII_STRING_MARSHALLER), "JAVA");
            h.put(Metadata.Key.of("x-mq-protocol", Metadata.ASCII_STRING_MARSHALLER), "v2");
            h.put(Metadata.Key.of("x-mq-client-version", Metadata.ASCII_STRING_MARSHALLER), "5.0.8");
            h.put(Metadata.Key.of("x-mq-request-id", Metadata.ASCII_STRING_MARSHALLER), UUID.randomUUID().toString());
            MessagingServiceGrpc.MessagingServiceBlockingStub stub = MessagingServiceGrpc.newBlockingStub(channel)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(h));
            for (String topic : topics) {
                QueryRouteResponse r = stub.withDeadlineAfter(10, TimeUnit.SECONDS).queryRoute(QueryRouteRequest
                    .newBuilder().setTopic(Resource.newBuilder().setName(topic)).setEndpoints(proxyEndpoints())
                    .build());
                List<String> lines = new ArrayList<>();
                for (MessageQueue q : r.getMessageQueuesList()) {
                    lines.add("ROUTE " + topic + " " + queue(q));
                }
                Collections.sort(lines);
                System.out.println("ROUTE " + topic + " status=" + r.getStatus().getCode() + " queues="
                    + r.getMessageQueuesCount());
                lines.forEach(System.out::println);
                boolean found = !topic.startsWith("NoSuch");
                result(found ? r.getStatus().getCode().name().equals("OK") && r.getMessageQueuesCount() > 0
                        : r.getStatus().getCode().name().equals("TOPIC_NOT_FOUND"),
                    "QueryRoute " + topic + " answers " + (found ? "OK with queues" : "TOPIC_NOT_FOUND")
                        + " (got " + r.getStatus().getCode() + ", " + r.getMessageQueuesCount() + " queues)");
            }
            for (int i = 0; i < groups.length; i++) {
                QueryAssignmentResponse r = stub.withDeadlineAfter(10, TimeUnit.SECONDS).queryAssignment(
                    QueryAssignmentRequest.newBuilder().setTopic(Resource.newBuilder().setName(topics[i]))
                        .setGroup(Resource.newBuilder().setName(groups[i])).setEndpoints(proxyEndpoints()).build());
                List<String> lines = new ArrayList<>();
                for (Assignment a : r.getAssignmentsList()) {
                    lines.add("ASSIGN " + topics[i] + " " + groups[i] + " " + queue(a.getMessageQueue()));
                }
                Collections.sort(lines);
                System.out.println("ASSIGN " + topics[i] + " " + groups[i] + " status=" + r.getStatus().getCode()
                    + " assignments=" + r.getAssignmentsCount());
                lines.forEach(System.out::println);
                result(r.getStatus().getCode().name().equals("OK") && r.getAssignmentsCount() > 0,
                    "QueryAssignment " + topics[i] + "/" + groups[i] + " answers OK with assignments (got "
                        + r.getStatus().getCode() + ", " + r.getAssignmentsCount() + ")");
            }
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static String body(MessageView m) {
        ByteBuffer b = m.getBody().duplicate();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Receives and acks until every expected body was seen or the deadline; returns the bodies in order. */
    private static List<String> receiveAll(SimpleConsumer consumer, Set<String> expected, long deadlineMs)
        throws Exception {
        List<String> got = new ArrayList<>();
        Set<String> missing = new LinkedHashSet<>(expected);
        while (!missing.isEmpty() && System.currentTimeMillis() < deadlineMs) {
            List<MessageView> batch = consumer.receive(16, Duration.ofSeconds(30));
            for (MessageView m : batch) {
                String b = body(m);
                got.add(b);
                missing.remove(b);
                consumer.ack(m);
            }
        }
        return got;
    }

    public static void main(String[] args) throws Exception {
        host = args[0].substring(0, args[0].lastIndexOf(':'));
        port = Integer.parseInt(args[0].substring(args[0].lastIndexOf(':') + 1));
        String normalTopic = args[1];
        String fifoTopic = args[2];
        String normalGroup = args[3];
        String fifoGroup = args[4];
        int n = Integer.parseInt(args[5]);
        long deadline = System.currentTimeMillis() + 90_000;

        // The route of further topics (args 7..) is queried too, e.g. a read-only one.
        List<String> routeTopics = new ArrayList<>(List.of(normalTopic, fifoTopic));
        routeTopics.addAll(List.of(args).subList(6, args.length));
        routeTopics.add("NoSuchTopic_it");
        rawQueries(routeTopics.toArray(new String[0]), new String[] {normalGroup, fifoGroup});

        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(args[0]).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(10)).build();
        // The consumers first: their subscriptions exist before anything is sent.
        SimpleConsumer normalConsumer = provider.newSimpleConsumerBuilder().setClientConfiguration(cfg)
            .setConsumerGroup(normalGroup).setAwaitDuration(Duration.ofSeconds(2))
            .setSubscriptionExpressions(Collections.singletonMap(normalTopic, FilterExpression.SUB_ALL)).build();
        SimpleConsumer fifoConsumer = provider.newSimpleConsumerBuilder().setClientConfiguration(cfg)
            .setConsumerGroup(fifoGroup).setAwaitDuration(Duration.ofSeconds(2))
            .setSubscriptionExpressions(Collections.singletonMap(fifoTopic, FilterExpression.SUB_ALL)).build();
        Set<String> pushed = ConcurrentHashMap.newKeySet();
        PushConsumer pushConsumer = provider.newPushConsumerBuilder().setClientConfiguration(cfg)
            .setConsumerGroup(normalGroup + "_push")
            .setSubscriptionExpressions(Collections.singletonMap(normalTopic, FilterExpression.SUB_ALL))
            .setMessageListener(view -> {
                pushed.add(StandardCharsets.UTF_8.decode(view.getBody()).toString());
                return ConsumeResult.SUCCESS;
            }).build();
        Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg)
            .setTopics(normalTopic, fifoTopic).build();

        // NORMAL: n distinct bodies, then every one received.
        Set<String> normalBodies = new LinkedHashSet<>();
        int sent = 0;
        for (int i = 0; i < n; i++) {
            String b = "normal-" + i;
            Message m = provider.newMessageBuilder().setTopic(normalTopic).setTag("it").setKeys("k" + i)
                .setBody(b.getBytes(StandardCharsets.UTF_8)).build();
            try {
                producer.send(m);
                sent++;
                normalBodies.add(b);
            } catch (Exception e) {
                System.err.println("send " + b + " failed: " + e);
            }
        }
        result(sent == n, "producer sends " + n + " NORMAL messages to " + normalTopic + " (" + sent + " ok)");
        List<String> got = receiveAll(normalConsumer, normalBodies, deadline);
        Set<String> missing = new LinkedHashSet<>(normalBodies);
        missing.removeAll(got);
        result(missing.isEmpty(), "simple consumer " + normalGroup + " receives every NORMAL body (" + got.size()
            + " received, missing " + missing + ")");
        Set<String> unexpected = new LinkedHashSet<>(got);
        unexpected.removeAll(normalBodies);
        result(unexpected.isEmpty(), "no NORMAL body that was not sent (" + unexpected + ")");
        while (!pushed.containsAll(normalBodies) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Set<String> notPushed = new LinkedHashSet<>(normalBodies);
        notPushed.removeAll(pushed);
        Set<String> strayPushed = new LinkedHashSet<>(pushed);
        strayPushed.removeAll(normalBodies);
        result(notPushed.isEmpty() && strayPushed.isEmpty(), "push consumer " + normalGroup + "_push receives"
            + " every NORMAL body and nothing else (missing " + notPushed + ", not sent " + strayPushed + ")");

        // FIFO: 3 message groups interleaved, seq numbers per group; order per group on receipt.
        String[] mgroups = {"g0", "g1", "g2"};
        Set<String> fifoBodies = new LinkedHashSet<>();
        sent = 0;
        for (int i = 0; i < n; i++) {
            String g = mgroups[i % mgroups.length];
            String b = "fifo-" + g + "-" + (i / mgroups.length);
            Message m = provider.newMessageBuilder().setTopic(fifoTopic).setMessageGroup(g)
                .setBody(b.getBytes(StandardCharsets.UTF_8)).build();
            try {
                producer.send(m);
                sent++;
                fifoBodies.add(b);
            } catch (Exception e) {
                System.err.println("send " + b + " failed: " + e);
            }
        }
        result(sent == n, "producer sends " + n + " FIFO messages in 3 message groups to " + fifoTopic + " ("
            + sent + " ok)");
        got = receiveAll(fifoConsumer, fifoBodies, deadline);
        missing = new LinkedHashSet<>(fifoBodies);
        missing.removeAll(got);
        result(missing.isEmpty(), "FIFO consumer " + fifoGroup + " receives every FIFO body (" + got.size()
            + " received, missing " + missing + ")");
        Map<String, Integer> last = new HashMap<>();
        List<String> outOfOrder = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (String b : got) {
            if (!seen.add(b)) {
                continue; // a redelivery: order is about first deliveries
            }
            String[] parts = b.split("-");
            int seq = Integer.parseInt(parts[2]);
            Integer prev = last.put(parts[1], seq);
            if (prev != null && seq != prev + 1 || prev == null && seq != 0) {
                outOfOrder.add(b + " after " + (prev == null ? "nothing" : parts[1] + "-" + prev));
            }
        }
        result(outOfOrder.isEmpty(), "FIFO bodies arrive in send order per message group (" + outOfOrder + ")");

        producer.close();
        // Not pushConsumer.close(): it waits for its long-polling receives to end (~20 s), and
        // the exit below ends them as well.
        normalConsumer.close();
        fifoConsumer.close();
        System.exit(0);
    }
}
