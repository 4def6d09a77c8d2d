package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/kafkalog"
	"github.com/agentgate/agentgate/streams/kafkaout"
)

// kafkaFlags are the flags of serve's Kafka mode.
type kafkaFlags struct {
	brokers    string
	partitions int
	group      string
	topics     kafkagate.Topics
	timeout    time.Duration
	session    time.Duration
	waitBroker time.Duration
	// minFree is serve's --min-free-bytes, for the partition stores.
	minFree int64
	// business is serve's business call options, for each owned
	// partition's adapter runner.
	business *adapterFlags
}

// addKafkaFlags registers the Kafka flags on f (each settable as
// AGENTGATE_<FLAG>).
func addKafkaFlags(f *pflag.FlagSet) *kafkaFlags {
	k := &kafkaFlags{}
	d := kafkagate.DefaultTopics()
	f.StringVar(&k.brokers, "kafka-brokers", "", "Kafka bootstrap brokers HOST:PORT[,...]: run on Kafka instead of the embedded log")
	f.IntVar(&k.partitions, "kafka-partitions", 8, "partitions of the topics the gate creates when they are missing")
	f.StringVar(&k.group, "kafka-group", kafkagate.DefaultGroupID, "consumer group of the gate instances")
	f.StringVar(&k.topics.Requests, "kafka-topic-requests", d.Requests, "requests topic")
	f.StringVar(&k.topics.Events, "kafka-topic-events", d.Events, "events topic (the log; co-partitioned with requests)")
	f.StringVar(&k.topics.Decisions, "kafka-topic-decisions", d.Decisions, "decisions topic")
	f.StringVar(&k.topics.Replies, "kafka-topic-replies", d.Replies, "default reply topic (the HTTP API's replies)")
	f.StringVar(&k.topics.A2A, "kafka-topic-a2a", d.A2A, "verified agent-to-agent messages topic")
	f.StringVar(&k.topics.Changes, "kafka-topic-changes", d.Changes, "principal-wide changes topic (one partition, kept forever)")
	f.StringVar(&k.topics.DeadLetter, "kafka-topic-deadletter", d.DeadLetter, "dead-letter topic")
	f.DurationVar(&k.timeout, "kafka-request-timeout", 10*time.Second, "how long the HTTP API waits for a reply through Kafka (then 504)")
	f.DurationVar(&k.session, "kafka-session-timeout", 6*time.Second, "consumer group session timeout: how long a silent instance keeps its partitions")
	f.DurationVar(&k.waitBroker, "kafka-wait", 30*time.Second, "how long start-up waits for the brokers to answer")
	return k
}

func (k *kafkaFlags) enabled() bool { return strings.TrimSpace(k.brokers) != "" }

func (k *kafkaFlags) brokerList() []string {
	var out []string
	for _, b := range strings.Split(k.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// serveKafka runs serve in Kafka mode: the partition workers of this
// instance's share of the requests topic, and the HTTP API over Kafka.
func serveKafka(k *kafkaFlags, z3 *z3Flags, eng *engineFlags, rate *rateFlags, proxy *proxyFlags, wh *webhookFlags, dataDir, addr, apiKey string, cfg domain.Config, ck domain.CheckpointPolicy, attestTTL, drain time.Duration, log *slog.Logger) error {
	if apiKey == "" {
		return errors.New("serving on Kafka needs --api-key (AGENTGATE_API_KEY): every instance shares the admin key")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	brokers := k.brokerList()
	n, err := ensureTopics(ctx, brokers, k, log)
	if err != nil {
		return err
	}
	solver, closeSolver := startSolver(z3, log)
	defer closeSolver()
	host, err := startEngineHost(eng, log)
	if err != nil {
		return err
	}
	defer host.Close()
	engines, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{Solver: solver, Isolate: host.Isolate})...)
	if err != nil {
		return err
	}
	kr, err := attest.OpenKeyring(dataDir)
	if err != nil {
		return fmt.Errorf("opening signing keys: %w", err)
	}
	defer reloadKeysOnHangup(kr, log)()
	nodeID, err := attest.NodeID(dataDir)
	if err != nil {
		return err
	}
	caller, err := k.business.caller(kr, nodeID)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	metrics := handlers.NewMetrics(reg)
	if err := rate.tls.register(reg); err != nil {
		return err
	}
	adminHash := command.HashSecret(apiKey)
	// The per-partition logs say only what goes wrong: their opening and
	// closing, twice per partition at every start, drowned the gate's own
	// lines (issue 17 item 13).
	plog := slog.New(warnings{log.Handler()})
	openLog := func(ctx context.Context, p int32) (streams.Log, error) {
		return kafkalog.Open(ctx, brokers, k.topics.Events, int(p), kafkalog.Options{Logger: plog})
	}
	// A partition worker's log is opened lazily: its restore reads the
	// partition whole anyway and finds the head on the way (one read of
	// the partition, not two).
	openWorkerLog := func(ctx context.Context, p int32) (streams.Log, error) {
		return kafkalog.Open(ctx, brokers, k.topics.Events, int(p), kafkalog.Options{Logger: plog, Lazy: true})
	}
	// An events partition opened lazily at a position: the read model's
	// partitions.
	openFrom := func(ctx context.Context, p int32, from kafkalog.Position) (*kafkalog.Log, error) {
		return kafkalog.Open(ctx, brokers, k.topics.Events, int(p), kafkalog.Options{Logger: plog, Lazy: true, From: from})
	}
	// Each owned partition runs its webhook runner, woken by its batches.
	hooks := wh.runners(log)
	g, err := kafkagate.New(kafkagate.Config{
		Brokers: brokers, Topics: k.topics, GroupID: k.group, DataDir: dataDir, OpenLog: openWorkerLog,
		Signer: kr.SignerTTL(nodeID, attestTTL), AdminKeyHash: adminHash, Config: &cfg, Logger: log,
		OnBatch: hooks.onBatch(metrics.OnBatch), OnPartition: hooks.onPartition(kr),
		SessionTimeout: k.session, Verifier: actionVerifier(verify.NewActionVerifier(engines, 0)), Engines: engines,
		Checkpoint: ck, MinFreeBytes: k.minFree, Caller: caller,
	}, n)
	if err != nil {
		return err
	}
	defer g.Close()
	// The read model resumes each events partition where its checkpoint
	// stands (the partitions read only what came since).
	reads, err := kafkagate.OpenReadModel(ctx, filepath.Join(dataDir, "readmodel"), log, n, openFrom)
	if err != nil {
		return err
	}
	defer reads.Close()
	cl, err := kafkaout.NewRequester(ctx, kafkaout.RequesterConfig{Brokers: brokers, RequestTopic: k.topics.Requests, ReplyTopic: k.topics.Replies,
		Timeout: k.timeout, Logger: log})
	if err != nil {
		return err
	}
	defer cl.Close()

	bg, cancel := context.WithCancel(context.Background())
	gerr := make(chan error, 1)
	go func() { gerr <- g.Run(bg) }()
	rdone := make(chan struct{})
	go func() { reads.Follow(bg, 200*time.Millisecond); close(rdone) }()

	hg := kafkagate.NewHTTPGate(cl, adminHash, k.topics, nodeID, reads)
	qwed, err := verify.New(verify.Config{Registry: engines, Gate: hg, Logger: log, RecordTimeout: k.timeout})
	if err != nil {
		cancel()
		<-gerr
		<-rdone
		return err
	}
	h := httpapi.New(httpapi.Config{
		Gate: hg, Store: reads.Store(), Verify: qwed,
		AdminKeyHash: adminHash, JWKS: kr.JWKS, Registry: reg, Logger: log, Clock: time.Now, RequestTimeout: k.timeout,
		VerifyRateLimit: rate.limit(), RefusalLimit: rate.refusalLimit(), // per instance
		// A payload's event must fit one record of the events log.
		A2ARateLimit: rate.a2aLimit(), ExecuteRateLimit: rate.executeLimit(), ExecuteMode: cfg.ExecuteConfig().Mode, A2AMaxPayloadBytes: min(cfg.A2ASettings().MaxPayloadSizeBytes, kafkagate.MaxA2APayloadBytes),
		WebhookRateLimit: wh.limit(), PrincipalWriteRateLimit: rate.principalLimit(),
		// Compliance reports and time travel read the agent's events
		// partition.
		History:      kafkagate.PartitionHistory(n, openLog),
		SignTreeHead: func(c attest.TreeHeadClaims) (string, error) { return kr.SignTreeHead(nodeID, c) },
		// A key, agent or approval another instance has just written is
		// found once the read model has caught up.
		CatchUp: reads.CatchUp,
	})
	h, err = proxy.wrap(h, cfg.A2ASettings().MaxPayloadSizeBytes, log)
	if err == nil {
		h, err = withOpenAPICheck(h, log)
	}
	srv := httpapi.NewServer(addr, h)
	var ln net.Listener
	if err == nil {
		ln, err = rate.listen(srv)
	}
	if err != nil {
		cancel()
		<-gerr
		<-rdone
		return err
	}
	serr := make(chan error, 1)
	go func() { serr <- rate.serve(srv, ln) }()
	rate.announce(ln)
	log.Info("agentgate serving on Kafka", "http", ln.Addr().String(), "brokers", brokers, "partitions", n, "group", k.group, "node", nodeID)
	select {
	case <-ctx.Done():
		log.Info("draining in-flight requests")
	case err := <-serr:
		cancel()
		<-gerr
		<-rdone
		return fmt.Errorf("serving HTTP: %w", err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), drain)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutting down HTTP", "err", err)
	}
	cancel()
	err = <-gerr
	<-rdone
	if err != nil {
		return fmt.Errorf("running partitions: %w", err)
	}
	log.Info("stopped")
	return nil
}

// ensureTopics creates the missing topics, retrying while the brokers do
// not answer yet (make run-kafka and docker-compose start the broker
// beside the gate) for up to --kafka-wait.
func ensureTopics(ctx context.Context, brokers []string, k *kafkaFlags, log *slog.Logger) (int, error) {
	deadline := time.Now().Add(k.waitBroker)
	for {
		n, err := kafkagate.EnsureTopics(ctx, brokers, k.topics, k.partitions)
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return 0, fmt.Errorf("preparing the Kafka topics: %w", err)
		}
		log.Info("waiting for the Kafka brokers", "brokers", brokers, "err", err)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// actionVerifier wraps the engines of every Kafka partition's worker: the
// identity, except in a build with the tag agentgate_crashhook (tests
// only, crashhook.go).
var actionVerifier = func(v handlers.ActionVerifier) handlers.ActionVerifier { return v }

// warnings is a slog handler that passes only warnings and errors.
type warnings struct{ slog.Handler }

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{h.Handler.WithAttrs(attrs)}
}

func (h warnings) WithGroup(name string) slog.Handler { return warnings{h.Handler.WithGroup(name)} }
