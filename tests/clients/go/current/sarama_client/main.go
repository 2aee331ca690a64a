// Command sarama_client drives current sarama (github.com/IBM/sarama, pinned in ../go.mod) against a broker for
// tests/integration/test_go_clients.py: the idempotent and transactional producer, read_committed consumers,
// consumer groups and the cluster admin, speaking Kafka 4.
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

	"github.com/IBM/sarama"
)

var (
	brokers       = flag.String("brokers", "127.0.0.1:9092", "bootstrap host:port")
	mode          = flag.String("mode", "", "produce, consume, group or admin")
	topic         = flag.String("topic", "", "topic")
	group         = flag.String("group", "", "consumer group id")
	count         = flag.Int("count", 10, "messages to produce or consume")
	prefix        = flag.String("prefix", "v", "produced values are this and a number")
	compression   = flag.String("compression", "none", "none, gzip, snappy, lz4 or zstd")
	transactional = flag.String("transactional-id", "", "produce in one transaction with this id")
	abort         = flag.Bool("abort", false, "abort the transaction instead of committing it")
	committed     = flag.Bool("read-committed", false, "consume with isolation level read_committed")
	timeout       = flag.Duration("timeout", 20*time.Second, "give up after this long")
)

func config() *sarama.Config {
	conf := sarama.NewConfig()
	conf.ClientID = "minibroker-sarama-current"
	conf.Version = sarama.V4_0_0_0
	conf.Metadata.Retry.Backoff = 50 * time.Millisecond
	conf.Producer.Return.Successes = true
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Retry.Backoff = 50 * time.Millisecond
	conf.Producer.Idempotent = true
	conf.Net.MaxOpenRequests = 1
	codecs := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
		"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}
	codec, known := codecs[*compression]
	if !known {
		fail(fmt.Errorf("unknown -compression %q", *compression))
	}
	conf.Producer.Compression = codec
	if *transactional != "" {
		conf.Producer.Transaction.ID = *transactional
		conf.Producer.Transaction.Retry.Backoff = 50 * time.Millisecond
	}
	if *committed {
		conf.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Return.Errors = true
	conf.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	conf.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
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

// produce sends -count messages, in one transaction when -transactional-id is given.
func produce() {
	producer, err := sarama.NewSyncProducer([]string{*brokers}, config())
	fail(err)
	defer producer.Close()
	if *transactional != "" {
		fail(producer.BeginTxn())
	}
	offsets := []int64{}
	for i := 0; i < *count; i++ {
		msg := &sarama.ProducerMessage{Topic: *topic, Partition: 0, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.StringEncoder(fmt.Sprintf("%s%d", *prefix, i))}
		_, offset, err := producer.SendMessage(msg)
		fail(err)
		offsets = append(offsets, offset)
	}
	outcome := "none"
	if *transactional != "" && *abort {
		fail(producer.AbortTxn())
		outcome = "aborted"
	} else if *transactional != "" {
		fail(producer.CommitTxn())
		outcome = "committed"
	}
	emit(map[string]interface{}{"offsets": offsets, "transaction": outcome})
}

// consume reads partition 0 from the oldest offset until -count messages came or the partition's end is reached
// (its high watermark, or last stable offset under read_committed).
func consume() {
	client, err := sarama.NewClient([]string{*brokers}, config())
	fail(err)
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	fail(err)
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(*topic, 0, sarama.OffsetOldest)
	fail(err)
	defer pc.Close()
	values := []string{}
	offsets := []int64{}
	deadline := time.After(*timeout)
	for len(values) < *count {
		select {
		case msg := <-pc.Messages():
			values = append(values, string(msg.Value))
			offsets = append(offsets, msg.Offset)
		case err := <-pc.Errors():
			fail(err)
		case <-deadline:
			fail(fmt.Errorf("timed out with %d of %d messages", len(values), *count))
		}
	}
	emit(map[string]interface{}{"values": values, "offsets": offsets})
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
	client, err := sarama.NewConsumerGroup([]string{*brokers}, *group, config())
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

// admin creates -topic with 3 partitions, reads its configs and the group list, and deletes it.
func admin() {
	ca, err := sarama.NewClusterAdmin([]string{*brokers}, config())
	fail(err)
	defer ca.Close()
	retention := "3600000"
	fail(ca.CreateTopic(*topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"retention.ms": &retention}}, false))
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
