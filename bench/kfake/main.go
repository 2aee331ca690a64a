// Command kfake runs franz-go's kfake, an in-memory fake Kafka cluster, as one node on a given port, for the
// benchmarks in bench/: it prints "kfake listening on HOST:PORT" once the node accepts connections and runs
// until SIGTERM or SIGINT, or until its standard input closes with -stop-on-stdin-close.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "the port of the one broker (0: a free one)")
	stopOnStdinClose := flag.Bool("stop-on-stdin-close", false, "exit when standard input closes")
	flag.Parse()

	// One broker, kfake's defaults otherwise (it keeps every record in memory).
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Printf("kfake listening on %s\n", cluster.ListenAddrs()[0])

	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, syscall.SIGINT)
	if *stopOnStdinClose {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			done <- syscall.SIGTERM
		}()
	}
	<-done
}
