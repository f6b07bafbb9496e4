// Command goclient is the Go side of tests/interop/run_clients.sh: a rocketmq-client-go v2
// producer and push consumer that find their broker only through the NameServer under test.
//
// It prints one line per check, "RESULT pass <what>" or "RESULT fail <what>", and exits 0
// only when every check passed. Client logs (warnings and errors, and the route updates the
// client reports) go to stderr.
//
// What it checks:
//   - every synchronous send succeeds, on a queue of the expected broker whose id lies within
//     the queue count the route gave, and its offset message id names the broker's address;
//   - the route the client parsed out of our route body (the Go client sends version 317 and
//     so gets the legacy body with bare integer brokerAddrs keys, which it splits by hand)
//     maps broker id 0 to the broker's address, with the right broker and cluster names;
//   - the topic route fetched once the broker registered the new topic lists the broker's
//     queues with ids 0..n-1, and the admin client's topic list contains the topic;
//   - a push consumer of a new group, reading from the first offset, receives every body that
//     was sent, and nothing else.
//
// With -access-key and -secret-key every client signs its requests (primitive.Credentials, the
// Go client's ACL interceptor), for run_acl.sh against a NameServer that wants signed reads.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

var failures int

func result(ok bool, format string, args ...interface{}) {
	verdict := "pass"
	if !ok {
		verdict = "fail"
		failures++
	}
	fmt.Printf("RESULT %s %s\n", verdict, fmt.Sprintf(format, args...))
}

// routeLogger replaces the client's logrus logger. The client announces every route it stores
// with the Info line "the topic route info changed", whose "changeTo" field is the parsed
// TopicRouteData re-encoded as JSON: that is how this program sees what the client made of
// our route body, without reaching into the client's internal packages.
type routeLogger struct {
	mu     sync.Mutex
	routes map[string]string // topic -> last parsed route the client stored, as JSON
}

func (l *routeLogger) print(level, msg string, fields map[string]interface{}) {
	fmt.Fprintf(os.Stderr, "%s %s %s %v\n", time.Now().Format("15:04:05.000"), level, msg, fields)
}

func (l *routeLogger) Debug(msg string, fields map[string]interface{}) {}

func (l *routeLogger) Info(msg string, fields map[string]interface{}) {
	if msg != "the topic route info changed" {
		return
	}
	topic, _ := fields[rlog.LogKeyTopic].(string)
	route, _ := fields[rlog.LogKeyValueChangedTo].(string)
	l.mu.Lock()
	l.routes[topic] = route
	l.mu.Unlock()
	l.print("INFO", msg, fields)
}

func (l *routeLogger) Warning(msg string, fields map[string]interface{}) {
	l.print("WARN", msg, fields)
}

func (l *routeLogger) Error(msg string, fields map[string]interface{}) {
	l.print("ERROR", msg, fields)
}

func (l *routeLogger) Fatal(msg string, fields map[string]interface{}) {
	l.print("FATAL", msg, fields)
	os.Exit(3)
}

func (l *routeLogger) Level(level string) {}

func (l *routeLogger) OutputPath(path string) error {
	return nil
}

func (l *routeLogger) route(topic string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.routes[topic]
}

// parsedRoute mirrors the JSON the client's TopicRouteData.String() produces.
type parsedRoute struct {
	QueueDatas []struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int    `json:"readQueueNums"`
		WriteQueueNums int    `json:"writeQueueNums"`
		Perm           int    `json:"perm"`
	} `json:"queueDatas"`
	BrokerDatas []struct {
		Cluster     string            `json:"cluster"`
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
}

func checkParsedRoute(what, text, brokerName, brokerAddr, cluster string) {
	var r parsedRoute
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		result(false, "%s: client stored a route (%q: %v)", what, text, err)
		return
	}
	ok := len(r.BrokerDatas) == 1 && r.BrokerDatas[0].BrokerName == brokerName &&
		r.BrokerDatas[0].Cluster == cluster && len(r.BrokerDatas[0].BrokerAddrs) == 1 &&
		r.BrokerDatas[0].BrokerAddrs["0"] == brokerAddr
	result(ok, "%s: client parsed brokerAddrs {0:%s} of broker %s in cluster %s (got %s)",
		what, brokerAddr, brokerName, cluster, text)
	ok = len(r.QueueDatas) == 1 && r.QueueDatas[0].BrokerName == brokerName &&
		r.QueueDatas[0].WriteQueueNums > 0 && r.QueueDatas[0].Perm&2 != 0
	result(ok, "%s: client parsed one writable queueData of broker %s", what, brokerName)
}

func main() {
	namesrv := flag.String("namesrv", "", "NameServer address host:port")
	topic := flag.String("topic", "", "topic to create by sending")
	n := flag.Int("n", 20, "number of messages")
	brokerName := flag.String("broker-name", "", "expected broker name")
	brokerAddr := flag.String("broker-addr", "", "expected broker address host:port")
	cluster := flag.String("cluster", "", "expected cluster name")
	deadline := flag.Duration("timeout", 90*time.Second, "give up after this long")
	accessKey := flag.String("access-key", "", "sign every request with this account (ACL)")
	secretKey := flag.String("secret-key", "", "the account's secret key")
	flag.Parse()
	creds := primitive.Credentials{AccessKey: *accessKey, SecretKey: *secretKey}
	if *namesrv == "" || *topic == "" || *brokerName == "" || *brokerAddr == "" || *cluster == "" {
		fmt.Fprintln(os.Stderr, "usage: goclient -namesrv A -topic T -broker-name B -broker-addr A -cluster C [-n N]")
		os.Exit(2)
	}
	// Every wait below is bounded; this is the backstop for a client call that hangs.
	time.AfterFunc(*deadline, func() {
		fmt.Printf("RESULT fail whole Go run finished within %s\n", *deadline)
		os.Exit(1)
	})

	logger := &routeLogger{routes: map[string]string{}}
	rlog.SetLogger(logger)
	resolver := primitive.NewPassthroughResolver([]string{*namesrv})
	stamp := time.Now().UnixNano()

	// 1. Producer: the topic does not exist yet, so the first send goes through the route of
	// TBW102 and the broker creates the topic (autoCreateTopicEnable).
	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(resolver),
		producer.WithCredentials(creds),
		producer.WithGroupName(fmt.Sprintf("go_it_producer_%d", stamp)),
		producer.WithInstanceName("go_it_producer"),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		result(false, "producer created (%v)", err)
		os.Exit(1)
	}
	if err := p.Start(); err != nil {
		result(false, "producer started (%v)", err)
		os.Exit(1)
	}
	sent := map[string]bool{}
	queuesUsed := map[int]bool{}
	sendOK := 0
	brokerHost := (*brokerAddr)[:strings.LastIndex(*brokerAddr, ":")]
	brokerPort := (*brokerAddr)[strings.LastIndex(*brokerAddr, ":")+1:]
	for i := 0; i < *n; i++ {
		body := fmt.Sprintf("go-body-%d-%03d", stamp, i)
		res, err := p.SendSync(context.Background(), primitive.NewMessage(*topic, []byte(body)))
		if err != nil || res.Status != primitive.SendOK {
			result(false, "send %d of %d (%v %v)", i+1, *n, res, err)
			continue
		}
		sent[body] = true
		mq := res.MessageQueue
		id, idErr := primitive.UnmarshalMsgID([]byte(res.OffsetMsgID))
		okQueue := mq != nil && mq.Topic == *topic && mq.BrokerName == *brokerName && mq.QueueId >= 0
		okAddr := idErr == nil && id.Addr == brokerHost && fmt.Sprint(id.Port) == brokerPort
		if !okQueue || !okAddr {
			result(false, "send %d went to broker %s at %s (queue %v, offsetMsgId %s)",
				i+1, *brokerName, *brokerAddr, mq, res.OffsetMsgID)
			continue
		}
		queuesUsed[mq.QueueId] = true
		sendOK++
	}
	result(sendOK == *n, "%d of %d sync sends succeeded on broker %s, offset ids naming %s",
		sendOK, *n, *brokerName, *brokerAddr)

	// 2. The route the producer built from our answers (TBW102's route, stored for the topic).
	if text := logger.route(*topic); text == "" {
		result(false, "producer stored a route for %s", *topic)
	} else {
		checkParsedRoute("producer route for "+*topic, text, *brokerName, *brokerAddr, *cluster)
	}

	// 3. The topic's own route, once the broker has registered the topic it created.
	adm, err := admin.NewAdmin(admin.WithResolver(resolver), admin.WithCredentials(creds))
	if err != nil {
		result(false, "admin client created (%v)", err)
		os.Exit(1)
	}
	var mqs []*primitive.MessageQueue
	routeDeadline := time.Now().Add(20 * time.Second)
	for {
		mqs, err = adm.FetchPublishMessageQueues(context.Background(), *topic)
		if err == nil && len(mqs) > 0 {
			break
		}
		// NO_PERMISSION (ACL) does not go away by waiting.
		if time.Now().After(routeDeadline) || (err != nil && strings.Contains(err.Error(), "CODE: 16")) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if len(mqs) == 0 {
		result(false, "route of %s found through the NameServer within 20 s (%v)", *topic, err)
	} else {
		ids := []int{}
		okNames := true
		for _, mq := range mqs {
			ids = append(ids, mq.QueueId)
			okNames = okNames && mq.BrokerName == *brokerName && mq.Topic == *topic
		}
		sort.Ints(ids)
		okIds := true
		for i, id := range ids {
			okIds = okIds && id == i
		}
		result(okNames && okIds, "route of %s: %d queues of broker %s, ids %v", *topic, len(mqs), *brokerName, ids)
		usedOK := true
		for q := range queuesUsed {
			usedOK = usedOK && q < len(mqs)
		}
		result(usedOK, "every queue id the sends used is below the topic's queue count %d (used %v)",
			len(mqs), queuesUsed)
	}
	// GET_ALL_TOPIC_LIST_FROM_NAMESERVER through the Go admin client.
	if list, err := adm.FetchAllTopicList(context.Background()); err != nil {
		result(false, "admin topic list fetched (%v)", err)
	} else {
		found := false
		for _, t := range list.TopicList {
			found = found || t == *topic
		}
		result(found, "admin topic list (%d topics) contains %s", len(list.TopicList), *topic)
	}
	_ = adm.Close()

	// 4. Push consumer of a new group, from the first offset.
	var mu sync.Mutex
	received := map[string]int{}
	strangers := 0
	all := make(chan struct{})
	var allOnce sync.Once
	c, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(resolver),
		consumer.WithCredentials(creds),
		consumer.WithGroupName(fmt.Sprintf("go_it_consumer_%d", stamp)),
		consumer.WithInstance("go_it_consumer"),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		result(false, "push consumer created (%v)", err)
		os.Exit(1)
	}
	err = c.Subscribe(*topic, consumer.MessageSelector{}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			body := string(m.Body)
			if sent[body] {
				received[body]++
			} else {
				strangers++
			}
		}
		if len(received) == len(sent) {
			allOnce.Do(func() { close(all) })
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		result(false, "push consumer subscribed (%v)", err)
		os.Exit(1)
	}
	if err := c.Start(); err != nil {
		result(false, "push consumer started (%v)", err)
		os.Exit(1)
	}
	select {
	case <-all:
	case <-time.After(45 * time.Second):
	}
	mu.Lock()
	got, dup := len(received), 0
	for _, k := range received {
		dup += k - 1
	}
	result(got == *n && len(sent) == *n, "push consumer received all %d bodies (got %d distinct, %d redelivered)",
		*n, got, dup)
	result(strangers == 0, "push consumer received no body that was not sent (got %d)", strangers)
	mu.Unlock()

	// The consumer's client queried the topic's own route when it started; that is the last
	// route stored for the topic.
	if text := logger.route(*topic); text == "" {
		result(false, "consumer stored a route for %s", *topic)
	} else {
		checkParsedRoute("consumer route for "+*topic, text, *brokerName, *brokerAddr, *cluster)
	}

	_ = c.Shutdown()
	_ = p.Shutdown()
	if failures > 0 {
		os.Exit(1)
	}
}
