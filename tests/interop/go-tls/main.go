// Command gotlsclient is the TLS check of tests/interop/run_tls.sh: a rocketmq-client-go v2
// producer, push consumer and admin client with WithTls(true), finding their broker only through
// the NameServer under test. The released v2.1.2 has no TLS at all; this module pins a revision
// of the client's master branch (2025-12-26) that has it (tcp_conn.go: tls.DialWithDialer with
// InsecureSkipVerify, so the server certificate is not checked, like a Java client in test mode).
//
// It prints "RESULT pass|fail <what>" lines and exits 0 only when every check passed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
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

func main() {
	namesrv := flag.String("namesrv", "", "NameServer address host:port")
	topic := flag.String("topic", "", "topic to create by sending")
	n := flag.Int("n", 20, "number of messages")
	brokers := flag.String("brokers", "", "comma-separated names of the brokers that may hold the topic")
	deadline := flag.Duration("timeout", 90*time.Second, "give up after this long")
	flag.Parse()
	if *namesrv == "" || *topic == "" || *brokers == "" {
		fmt.Fprintln(os.Stderr, "usage: gotlsclient -namesrv A -topic T -brokers B1,B2 [-n N]")
		os.Exit(2)
	}
	known := map[string]bool{}
	for _, b := range strings.Split(*brokers, ",") {
		known[b] = true
	}
	time.AfterFunc(*deadline, func() {
		fmt.Printf("RESULT fail whole Go TLS run finished within %s\n", *deadline)
		os.Exit(1)
	})
	rlog.SetLogLevel("warn")
	resolver := primitive.NewPassthroughResolver([]string{*namesrv})
	stamp := time.Now().UnixNano()

	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(resolver),
		producer.WithGroupName(fmt.Sprintf("go_tls_producer_%d", stamp)),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
		producer.WithTls(true),
	)
	if err == nil {
		err = p.Start()
	}
	if err != nil {
		result(false, "TLS producer started (%v)", err)
		os.Exit(1)
	}
	sent := map[string]bool{}
	okSends := 0
	for i := 0; i < *n; i++ {
		body := fmt.Sprintf("go-tls-%d-%03d", stamp, i)
		res, err := p.SendSync(context.Background(), primitive.NewMessage(*topic, []byte(body)))
		if err == nil && res.Status == primitive.SendOK && res.MessageQueue != nil &&
			known[res.MessageQueue.BrokerName] {
			okSends++
			sent[body] = true
		} else {
			fmt.Fprintf(os.Stderr, "send %d: %v %v\n", i, res, err)
		}
	}
	result(okSends == *n, "%d of %d sync sends over TLS succeeded on brokers %s", okSends, *n, *brokers)

	adm, err := admin.NewAdmin(admin.WithResolver(resolver), admin.WithTls(true))
	if err != nil {
		result(false, "TLS admin client created (%v)", err)
	} else {
		found := false
		for end := time.Now().Add(20 * time.Second); !found && time.Now().Before(end); {
			list, err := adm.FetchAllTopicList(context.Background())
			if err == nil {
				for _, t := range list.TopicList {
					found = found || t == *topic
				}
			}
			if !found {
				time.Sleep(300 * time.Millisecond)
			}
		}
		result(found, "TLS admin topic list contains %s", *topic)
		_ = adm.Close()
	}

	var mu sync.Mutex
	received := map[string]bool{}
	all := make(chan struct{})
	var once sync.Once
	c, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(resolver),
		consumer.WithGroupName(fmt.Sprintf("go_tls_consumer_%d", stamp)),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTls(true),
	)
	if err == nil {
		err = c.Subscribe(*topic, consumer.MessageSelector{}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				if sent[string(m.Body)] {
					received[string(m.Body)] = true
				}
			}
			if len(received) == len(sent) {
				once.Do(func() { close(all) })
			}
			return consumer.ConsumeSuccess, nil
		})
	}
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		result(false, "TLS push consumer started (%v)", err)
		os.Exit(1)
	}
	select {
	case <-all:
	case <-time.After(45 * time.Second):
	}
	mu.Lock()
	result(len(received) == *n, "TLS push consumer received all %d bodies (got %d)", *n, len(received))
	mu.Unlock()
	_ = c.Shutdown()
	_ = p.Shutdown()
	if failures > 0 {
		os.Exit(1)
	}
}
