// Command sarama_client drives Debian's sarama (1.22) against a broker for tests/integration/test_go_clients.py.
//
// Each mode prints one JSON object on stdout and exits 0, or prints the error on stderr and exits 1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

var (
	brokers     = flag.String("brokers", "127.0.0.1:9092", "bootstrap host:port")
	version     = flag.String("version", "", "Kafka version sarama speaks (empty: sarama's default, 0.8.2.0)")
	mode        = flag.String("mode", "", "produce, consume, group or admin")
	topic       = flag.String("topic", "", "topic")
	group       = flag.String("group", "", "consumer group id")
	count       = flag.Int("count", 10, "messages to produce or consume")
	prefix      = flag.String("prefix", "v", "produced values are this and a number")
	idempotent  = flag.Bool("idempotent", false, "idempotent producer (needs -version 0.11.0.0 or later)")
	compression = flag.String("compression", "none", "none, gzip, snappy or lz4")
	timeout     = flag.Duration("timeout", 20*time.Second, "give up after this long")
	retention   = flag.Duration("retention", time.Hour, "group offsets retention (0: commit with OffsetCommit v1)")
)

func config() *sarama.Config {
	conf := sarama.NewConfig()
	conf.ClientID = "minibroker-sarama-test"
	if *version != "" {
		parsed, err := sarama.ParseKafkaVersion(*version)
		fail(err)
		conf.Version = parsed
	}
	conf.Metadata.Retry.Backoff = 50 * time.Millisecond
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Retry.Backoff = 50 * time.Millisecond
	switch *compression {
	case "gzip":
		conf.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		conf.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		conf.Producer.Compression = sarama.CompressionLZ4
	}
	if *idempotent {
		conf.Producer.Idempotent = true
		conf.Producer.Retry.Max = 5
		conf.Net.MaxOpenRequests = 1
	}
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Return.Errors = true
	conf.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	conf.Consumer.Offsets.CommitInterval = 100 * time.Millisecond
	conf.Admin.Timeout = 10 * time.Second
	return conf
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama_client:", err)
		os.Exit(1)
	}
}

func emit(v interface{}) {
	fail(json.NewEncoder(os.Stdout).Encode(v))
}

func produce() {
	producer, err := sarama.NewSyncProducer([]string{*brokers}, config())
	fail(err)
	defer producer.Close()
	offsets := []int64{}
	partitions := []int32{}
	for i := 0; i < *count; i++ {
		msg := &sarama.ProducerMessage{Topic: *topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.StringEncoder(fmt.Sprintf("%s%d", *prefix, i))}
		partition, offset, err := producer.SendMessage(msg)
		fail(err)
		partitions = append(partitions, partition)
		offsets = append(offsets, offset)
	}
	emit(map[string]interface{}{"partitions": partitions, "offsets": offsets})
}

// consume reads -count messages from partition 0 from the oldest offset, without a group, and prints
// each message's offset and whether it had a timestamp (message format 1 and later).
func consume() {
	consumer, err := sarama.NewConsumer([]string{*brokers}, config())
	fail(err)
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(*topic, 0, sarama.OffsetOldest)
	fail(err)
	defer pc.Close()
	values := []string{}
	offsets := []int64{}
	keys := []string{}
	timestamps := 0
	deadline := time.After(*timeout)
	for len(values) < *count {
		select {
		case msg := <-pc.Messages():
			values = append(values, string(msg.Value))
			offsets = append(offsets, msg.Offset)
			keys = append(keys, string(msg.Key))
			if !msg.Timestamp.IsZero() {
				timestamps++
			}
		case err := <-pc.Errors():
			fail(err)
		case <-deadline:
			fail(fmt.Errorf("timed out with %d of %d messages", len(values), *count))
		}
	}
	emit(map[string]interface{}{"values": values, "offsets": offsets, "keys": keys, "timestamps": timestamps})
}

type handler struct {
	mu     sync.Mutex
	values []string
	done   chan struct{}
	once   sync.Once
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		session.MarkMessage(msg, "")
		h.mu.Lock()
		h.values = append(h.values, string(msg.Value))
		if len(h.values) >= *count {
			h.once.Do(func() { close(h.done) })
		}
		h.mu.Unlock()
	}
	return nil
}

// consumeGroup reads -count messages as a member of -group and commits them when it leaves.
func consumeGroup() {
	conf := config()
	// a retention makes sarama commit with OffsetCommit v2; without one it commits with v1
	conf.Consumer.Offsets.Retention = *retention
	client, err := sarama.NewConsumerGroup([]string{*brokers}, *group, conf)
	fail(err)
	h := &handler{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for err := range client.Errors() {
			fmt.Fprintln(os.Stderr, "sarama_client: group error:", err)
		}
	}()
	finished := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := client.Consume(ctx, []string{*topic}, h); err != nil {
				finished <- err
				return
			}
		}
		finished <- nil
	}()
	select {
	case <-h.done:
	case err := <-finished:
		fail(fmt.Errorf("consume ended early: %v", err))
	case <-time.After(*timeout):
		h.mu.Lock()
		got := len(h.values)
		h.mu.Unlock()
		fail(fmt.Errorf("timed out with %d of %d messages", got, *count))
	}
	cancel()
	<-finished
	fail(client.Close()) // commits what was marked
	h.mu.Lock()
	defer h.mu.Unlock()
	emit(map[string]interface{}{"values": h.values})
}

// admin creates -topic with 3 partitions, describes its configs and deletes it.
func admin() {
	conf := config()
	ca, err := sarama.NewClusterAdmin([]string{*brokers}, conf)
	fail(err)
	defer ca.Close()
	fail(ca.CreateTopic(*topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"retention.ms": stringPtr("3600000")}}, false))
	topics, err := ca.ListTopics()
	fail(err)
	detail, listed := topics[*topic]
	entries, err := ca.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: *topic})
	fail(err)
	configs := map[string]string{}
	for _, entry := range entries {
		configs[entry.Name] = entry.Value
	}
	fail(ca.DeleteTopic(*topic))
	emit(map[string]interface{}{"listed": listed, "partitions": detail.NumPartitions, "configs": configs})
}

func stringPtr(s string) *string { return &s }

func main() {
	flag.Parse()
	switch *mode {
	case "produce":
		produce()
	case "consume":
		consume()
	case "group":
		consumeGroup()
	case "admin":
		admin()
	default:
		fail(fmt.Errorf("unknown -mode %q", *mode))
	}
}
