// Command franz_client drives franz-go (github.com/twmb/franz-go/pkg/kgo, pinned in ../go.mod) against a broker
// for tests/integration/test_go_clients.py: its transactional producer and its exactly-once group session.
// franz-go reads the finalized transaction.version from ApiVersions and takes Transactions V2 (KIP-890 part 2:
// Produce v12 adds the partition, EndTxn v5 bumps the epoch) when it is 2, V1 otherwise.
//
// Modes:
//
//	txn      produce -count records with values -prefix0.. in one transaction, committed or (-abort) aborted
//	copy     read -topic with group -group and write each value upper-cased to -to, exactly once, committing
//	         the group's offsets in the same transactions, until -count records were copied
//	consume  read -count records of -topic from the start (-read-committed: isolation level read_committed)
//
// Each mode prints one JSON object on stdout and exits 0, or prints the error on stderr and exits 1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	brokers       = flag.String("brokers", "127.0.0.1:9092", "bootstrap host:port")
	mode          = flag.String("mode", "", "txn, copy or consume")
	topic         = flag.String("topic", "", "topic")
	to            = flag.String("to", "", "copy: the output topic")
	group         = flag.String("group", "", "copy: consumer group id")
	count         = flag.Int("count", 10, "records to produce, copy or consume")
	prefix        = flag.String("prefix", "v", "produced values are this and a number")
	transactional = flag.String("transactional-id", "", "transactional id")
	abort         = flag.Bool("abort", false, "txn: abort instead of committing")
	committed     = flag.Bool("read-committed", false, "consume with isolation level read_committed")
	timeout       = flag.Duration("timeout", 60*time.Second, "give up after this long")
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func emit(value any) {
	out, err := json.Marshal(value)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}

func common() []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(strings.Split(*brokers, ",")...), kgo.ClientID("minibroker-franz"),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}
}

func produceTxn(ctx context.Context) {
	client, err := kgo.NewClient(append(common(), kgo.TransactionalID(*transactional),
		kgo.DefaultProduceTopic(*topic))...)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	if err := client.BeginTransaction(); err != nil {
		fail(err)
	}
	for i := 0; i < *count; i++ {
		record := &kgo.Record{Value: []byte(fmt.Sprintf("%s%d", *prefix, i))}
		if err := client.ProduceSync(ctx, record).FirstErr(); err != nil {
			fail(err)
		}
	}
	commit, outcome := kgo.TryCommit, "committed"
	if *abort {
		commit, outcome = kgo.TryAbort, "aborted"
	}
	if err := client.EndTransaction(ctx, commit); err != nil {
		fail(err)
	}
	emit(map[string]any{"transaction": outcome})
}

func copyExactlyOnce(ctx context.Context) {
	session, err := kgo.NewGroupTransactSession(append(common(), kgo.TransactionalID(*transactional),
		kgo.ConsumerGroup(*group), kgo.ConsumeTopics(*topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic(*to))...)
	if err != nil {
		fail(err)
	}
	defer session.Close()
	copied := 0
	for copied < *count {
		fetches := session.PollFetches(ctx)
		if ctx.Err() != nil {
			fail(fmt.Errorf("copied %d of %d records: %w", copied, *count, ctx.Err()))
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			fail(fmt.Errorf("fetch: %v", errs))
		}
		if fetches.NumRecords() == 0 {
			continue
		}
		if err := session.Begin(); err != nil {
			fail(err)
		}
		fetches.EachRecord(func(record *kgo.Record) {
			out := &kgo.Record{Value: []byte(strings.ToUpper(string(record.Value)))}
			session.Produce(ctx, out, func(_ *kgo.Record, err error) {
				if err != nil {
					fail(err)
				}
			})
		})
		done, err := session.End(ctx, kgo.TryCommit)
		if err != nil {
			fail(err)
		}
		if done {
			copied += fetches.NumRecords()
		}
	}
	emit(map[string]any{"copied": copied})
}

func consume(ctx context.Context) {
	opts := append(common(), kgo.ConsumeTopics(*topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if *committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	} else {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	values, offsets := []string{}, []int64{}
	for len(values) < *count {
		fetches := client.PollFetches(ctx)
		if ctx.Err() != nil {
			fail(fmt.Errorf("read %d of %d records (%v): %w", len(values), *count, values, ctx.Err()))
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			fail(fmt.Errorf("fetch: %v", errs))
		}
		fetches.EachRecord(func(record *kgo.Record) {
			values = append(values, string(record.Value))
			offsets = append(offsets, record.Offset)
		})
	}
	emit(map[string]any{"values": values, "offsets": offsets})
}

func main() {
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	switch *mode {
	case "txn":
		produceTxn(ctx)
	case "copy":
		copyExactlyOnce(ctx)
	case "consume":
		consume(ctx)
	default:
		fail(fmt.Errorf("unknown -mode %q", *mode))
	}
}
