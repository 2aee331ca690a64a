// Command kafkago_client drives Debian's segmentio kafka-go (0.2) against a broker for
// tests/integration/test_go_clients.py.
//
// Each mode prints one JSON object on stdout and exits 0, or prints the error on stderr and exits 1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/gzip"
)

var (
	brokers     = flag.String("brokers", "127.0.0.1:9092", "bootstrap host:port")
	mode        = flag.String("mode", "", "produce, group, create or delete")
	topic       = flag.String("topic", "", "topic")
	group       = flag.String("group", "", "consumer group id")
	partitions  = flag.Int("partitions", 3, "partitions of a created topic")
	count       = flag.Int("count", 10, "messages to produce or consume")
	compression = flag.String("compression", "none", "none or gzip")
	timeout     = flag.Duration("timeout", 20*time.Second, "give up after this long")
)

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkago_client:", err)
		os.Exit(1)
	}
}

func emit(v interface{}) {
	fail(json.NewEncoder(os.Stdout).Encode(v))
}

func produce() {
	config := kafka.WriterConfig{Brokers: []string{*brokers}, Topic: *topic, BatchTimeout: 10 * time.Millisecond,
		Balancer: &kafka.Hash{}}
	if *compression == "gzip" {
		config.CompressionCodec = gzip.NewCompressionCodec()
	}
	writer := kafka.NewWriter(config)
	msgs := []kafka.Message{}
	for i := 0; i < *count; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	fail(writer.WriteMessages(ctx, msgs...))
	fail(writer.Close())
	emit(map[string]interface{}{"written": len(msgs)})
}

// consumeGroup reads -count messages as a member of -group, committing each (CommitInterval 0).
func consumeGroup() {
	reader := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{*brokers}, Topic: *topic, GroupID: *group,
		MaxWait: 100 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	values := []string{}
	for len(values) < *count {
		msg, err := reader.ReadMessage(ctx)
		fail(err)
		values = append(values, string(msg.Value))
	}
	fail(reader.Close())
	emit(map[string]interface{}{"values": values})
}

func create() {
	conn, err := kafka.Dial("tcp", *brokers)
	fail(err)
	defer conn.Close()
	fail(conn.CreateTopics(kafka.TopicConfig{Topic: *topic, NumPartitions: *partitions, ReplicationFactor: 1}))
	found, err := conn.ReadPartitions(*topic)
	fail(err)
	emit(map[string]interface{}{"partitions": len(found)})
}

func deleteTopic() {
	conn, err := kafka.Dial("tcp", *brokers)
	fail(err)
	defer conn.Close()
	fail(conn.DeleteTopics(*topic))
	emit(map[string]interface{}{"deleted": *topic})
}

func main() {
	flag.Parse()
	switch *mode {
	case "produce":
		produce()
	case "group":
		consumeGroup()
	case "create":
		create()
	case "delete":
		deleteTopic()
	default:
		fail(fmt.Errorf("unknown -mode %q", *mode))
	}
}
