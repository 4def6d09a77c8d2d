package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/notify"
	"github.com/agentgate/agentgate/projections"
)

// webhookFlags configure the webhooks of the consumer policy engine
// (issue 14): the edge limit on webhook writes and the notify runner that
// delivers the notices (handlers/notify).
type webhookFlags struct {
	rate         httpapi.RateLimit
	allowPrivate bool
	timeout      time.Duration
	concurrency  int
}

func addWebhookFlags(f *pflag.FlagSet) *webhookFlags {
	o := &webhookFlags{}
	f.Float64Var(&o.rate.PerPrincipal, "webhook-rate", 5, "webhook writes (POST /webhooks, PUT and DELETE /webhooks/{id}) per second per API key (0: no limit); over it QWED-AUTH-004 (429)")
	f.IntVar(&o.rate.Burst, "webhook-burst", 20, "webhook writes an API key may send at once above --webhook-rate")
	f.Float64Var(&o.rate.Global, "webhook-global-rate", 200, "webhook writes per second of all API keys together (0: no limit)")
	f.IntVar(&o.rate.GlobalBurst, "webhook-global-burst", 400, "webhook writes all API keys may send at once above --webhook-global-rate")
	f.BoolVar(&o.allowPrivate, "webhook-allow-private", false, "let webhooks reach loopback and private addresses (refused by default: a consumer's URL must not reach the gate's own network; link-local ones, cloud metadata, are always refused)")
	f.DurationVar(&o.timeout, "webhook-timeout", notify.DefaultTimeout, "how long one webhook POST may take (connect, send, status)")
	f.IntVar(&o.concurrency, "webhook-concurrency", notify.DefaultConcurrency, "webhook POSTs in flight at once, per partition")
	return o
}

func (o *webhookFlags) limit() httpapi.RateLimit { return o.rate }

// runners holds the webhook runners of the partitions this process
// decides, so that each committed batch wakes its partition's.
type runners struct {
	o   *webhookFlags
	log *slog.Logger
	mu  sync.Mutex
	by  map[int32]*notify.Runner
}

func (o *webhookFlags) runners(log *slog.Logger) *runners {
	return &runners{o: o, log: log, by: map[int32]*notify.Runner{}}
}

// onBatch returns next (a worker's OnBatch, may be nil) followed by a
// wake of the runner of the batch's partition: a batch may hold notices.
func (rs *runners) onBatch(next func([]*domain.Event, time.Duration)) func([]*domain.Event, time.Duration) {
	return func(evs []*domain.Event, d time.Duration) {
		if next != nil {
			next(evs, d)
		}
		if len(evs) == 0 {
			return
		}
		rs.mu.Lock()
		r := rs.by[evs[0].Partition]
		rs.mu.Unlock()
		if r != nil {
			r.Wake()
		}
	}
}

// run runs partition p's runner over its worker and store until ctx ends
// (it returns once its attempts in flight are done): a runner signs with
// the keyring of the instance that runs it, whose JWKS the instance
// serves.
func (rs *runners) run(ctx context.Context, p int32, gate notify.Gate, store notify.Source, ring *attest.Keyring) error {
	r, err := notify.New(notify.Config{Gate: gate, Store: store, Sign: ring.SignWebhook, AllowPrivate: rs.o.allowPrivate,
		Timeout: rs.o.timeout, Concurrency: rs.o.concurrency, Logger: rs.log.With("webhooks", p)})
	if err != nil {
		return err
	}
	rs.mu.Lock()
	rs.by[p] = r
	rs.mu.Unlock()
	defer func() {
		rs.mu.Lock()
		delete(rs.by, p)
		rs.mu.Unlock()
	}()
	return r.Run(ctx)
}

// onPartition is kafkagate.Config.OnPartition: the runner of each owned
// partition, signing with ring.
func (rs *runners) onPartition(ring *attest.Keyring) func(context.Context, int32, *handlers.Worker, *projections.Store) {
	return func(ctx context.Context, p int32, w *handlers.Worker, s *projections.Store) {
		if err := rs.run(ctx, p, w, s, ring); err != nil {
			rs.log.Error("running the webhook runner", "partition", p, "err", err)
		}
	}
}
