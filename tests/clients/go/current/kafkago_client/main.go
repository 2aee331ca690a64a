// Command kafkago_client drives current segmentio kafka-go (pinned in ../go.mod) against a broker for
// tests/integration/test_go_clients.py: its Client (ApiVersions-negotiated admin and offset calls), Writer and
// group Reader.
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
	"github.com/segmentio/kafka-go/compress"
)

var (
	brokers     = flag.String("brokers", "127.0.0.1:9092", "bootstrap host:port")
	mode        = flag.String("mode", "", "create, produce, group, offsets or delete")
	topic       = flag.String("topic", "", "topic")
	group       = flag.String("group", "", "consumer group id")
	partitions  = flag.Int("partitions", 3, "partitions of a created topic")
	count       = flag.Int("count", 10, "messages to produce or consume")
	compression = flag.String("compression", "none", "none, gzip, snappy, lz4 or zstd")
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

func client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(*brokers), Timeout: *timeout}
}

func deadline() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), *timeout)
}

// create makes -topic through CreateTopics and reads its partitions back from Metadata.
func create() {
	ctx, cancel := deadline()
	defer cancel()
	created, err := client().CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: *topic, NumPartitions: *partitions, ReplicationFactor: 1}}})
	fail(err)
	fail(created.Errors[*topic])
	meta, err := client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{*topic}})
	fail(err)
	fail(meta.Topics[0].Error)
	emit(map[string]interface{}{"partitions": len(meta.Topics[0].Partitions)})
}

func produce() {
	codecs := map[string]compress.Compression{"none": 0, "gzip": compress.Gzip, "snappy": compress.Snappy,
		"lz4": compress.Lz4, "zstd": compress.Zstd}
	codec, known := codecs[*compression]
	if !known {
		fail(fmt.Errorf("unknown -compression %q", *compression))
	}
	writer := &kafka.Writer{Addr: kafka.TCP(*brokers), Topic: *topic, Balancer: &kafka.Hash{},
		BatchTimeout: 10 * time.Millisecond, RequiredAcks: kafka.RequireAll, Compression: codec}
	msgs := []kafka.Message{}
	for i := 0; i < *count; i++ {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))})
	}
	ctx, cancel := deadline()
	defer cancel()
	fail(writer.WriteMessages(ctx, msgs...))
	fail(writer.Close())
	emit(map[string]interface{}{"written": len(msgs)})
}

// consumeGroup reads -count messages as a member of -group, committing each (CommitInterval 0).
func consumeGroup() {
	reader := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{*brokers}, Topic: *topic, GroupID: *group,
		MaxWait: 100 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond, StartOffset: kafka.FirstOffset})
	ctx, cancel := deadline()
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

// offsets lists the first and last offsets of every partition of -topic, and -group's committed ones.
func offsets() {
	ctx, cancel := deadline()
	defer cancel()
	requests := []kafka.OffsetRequest{}
	ids := []int{}
	for p := 0; p < *partitions; p++ {
		requests = append(requests, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
		ids = append(ids, p)
	}
	listed, err := client().ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		*topic: requests}})
	fail(err)
	ends := map[int][]int64{}
	for _, partition := range listed.Topics[*topic] {
		fail(partition.Error)
		ends[partition.Partition] = []int64{partition.FirstOffset, partition.LastOffset}
	}
	fetched, err := client().OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: *group,
		Topics: map[string][]int{*topic: ids}})
	fail(err)
	fail(fetched.Error)
	committed := map[int]int64{}
	for _, partition := range fetched.Topics[*topic] {
		fail(partition.Error)
		committed[partition.Partition] = partition.CommittedOffset
	}
	emit(map[string]interface{}{"ends": ends, "committed": committed})
}

func deleteTopic() {
	ctx, cancel := deadline()
	defer cancel()
	deleted, err := client().DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{*topic}})
	fail(err)
	fail(deleted.Errors[*topic])
	emit(map[string]interface{}{"deleted": *topic})
}

func main() {
	flag.Parse()
	switch *mode {
	case "create":
		create()
	case "produce":
		produce()
	case "group":
		consumeGroup()
	case "offsets":
		offsets()
	case "delete":
		deleteTopic()
	default:
		fail(fmt.Errorf("unknown -mode %q", *mode))
	}
}
