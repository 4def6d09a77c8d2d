package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { moreCommands = append(moreCommands, devKafkaCmd) }

// devKafkaCmd runs a single-broker Kafka-protocol cluster (kfake) for
// development and tests. It is not Apache Kafka: use docker-compose.yml for
// that.
func devKafkaCmd() *cobra.Command {
	var (
		listen     string
		dataDir    string
		partitions int
		syncWrites bool
	)
	cmd := &cobra.Command{
		Use:   "dev-kafka",
		Short: "Run a local Kafka-protocol broker for development and tests (kfake, persisted in --data)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			c, err := startDevKafka(listen, dataDir, partitions, syncWrites, logger())
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stdout, "dev-kafka listening on %s (data %s)\n", c.ListenAddrs()[0], dataDir)
			<-ctx.Done()
			c.Close()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:9092", "broker listen address HOST:PORT (port 0 picks a free one)")
	f.StringVar(&dataDir, "data", "./data-dev-kafka", "directory the broker persists its topics and offsets in (\"\" keeps them in memory)")
	f.IntVar(&partitions, "partitions", 8, "partitions of auto-created topics")
	f.BoolVar(&syncWrites, "sync-writes", false, "fsync every produced batch (slower; without it the page cache holds unsynced batches, as Kafka's default)")
	return cmd
}

// startDevKafka starts a one-broker kfake cluster listening on listen.
func startDevKafka(listen, dataDir string, partitions int, syncWrites bool, log *slog.Logger) (*kfake.Cluster, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("parsing --listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("parsing --listen %q: bad port", listen)
	}
	if partitions < 1 {
		return nil, fmt.Errorf("--partitions must be at least 1, got %d", partitions)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ClusterID("agentgate-dev"),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(partitions),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
		kfake.ListenFn(func(network, addr string) (net.Listener, error) {
			_, p, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return net.Listen(network, net.JoinHostPort(host, p))
		}),
	}
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("creating broker data dir: %w", err)
		}
		opts = append(opts, kfake.DataDir(dataDir))
	}
	if syncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting dev broker: %w", err)
	}
	// Topics are created on first use, as Apache Kafka's default
	// auto.create.topics.enable=true does: for a metadata request that
	// asks (v4+, allow_auto_topic_creation; kfake.AllowAutoTopicCreation)
	// and for every metadata request older than v4, which cannot ask and
	// which Apache Kafka answers by creating the topic (kfake does not).
	// A name Apache Kafka refuses (Topic.validate) is never created (kfake
	// would create "..", "a/b" or a name of any length).
	c.ControlKey(kmsg.Metadata.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		if m, ok := r.(*kmsg.MetadataRequest); ok {
			if m.Version < 4 {
				m.AllowAutoTopicCreation = true
			}
			for _, t := range m.Topics {
				if t.Topic != nil && !validTopicName(*t.Topic) {
					m.AllowAutoTopicCreation = false
				}
			}
		}
		return nil, nil, false // not handled: the cluster answers it
	})
	log.Info("dev-kafka started", "addr", c.ListenAddrs(), "data", dataDir)
	return c, nil
}

// validTopicName reports whether Apache Kafka accepts name as a topic name:
// 1 to 249 characters of [a-zA-Z0-9._-], neither "." nor "..".
func validTopicName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 249 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
