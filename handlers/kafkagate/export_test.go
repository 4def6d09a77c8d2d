package kafkagate

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentgate/agentgate/domain"
)

// LeaveFlight writes partition p's flight record under dataDir as a gate
// leaves it when it dies trying alone the request at offset cur, which had
// killed it deaths times, with the isolation window [lo, hi].
func LeaveFlight(dataDir string, p int32, lo, hi, cur, deaths int64) error {
	dir := filepath.Join(dataDir, "partitions", strconv.Itoa(int(p)))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fl, err := openFlight(dir, -1)
	if err != nil {
		return err
	}
	fl.set(fFetched, hi)
	fl.set(fWritten, lo-1)
	fl.set(fIsoLo, lo)
	fl.set(fIsoHi, hi)
	fl.set(fCur, cur)
	fl.set(fDeaths, deaths)
	fl.close(false)
	return nil
}

// WithForwardHook sets the forwarders' fault hook (Config.forwardHook):
// an error it returns at a stage stands for the process dying there.
func WithForwardHook(h func(stage ForwardStage, p int32, seqs []uint64) error) func(*Config) {
	return func(c *Config) { c.forwardHook = h }
}

// WithMirrorHook sets the changes outbox's fault hook (Config.mirrorHook).
func WithMirrorHook(h func(stage ForwardStage, p int32, seqs []uint64) error) func(*Config) {
	return func(c *Config) { c.mirrorHook = h }
}

// WithNoticesHook sets the relayed notices' outboxes' fault hook
// (Config.noticesHook).
func WithNoticesHook(h func(stage ForwardStage, p int32, seqs []uint64) error) func(*Config) {
	return func(c *Config) { c.noticesHook = h }
}

// WithChangesRead sets the hook called before each pass of a copy feed
// over the changes topic (Config.changesRead): an error fails the pass.
func WithChangesRead(h func(ctx context.Context) error) func(*Config) {
	return func(c *Config) { c.changesRead = h }
}

// HoldCopies makes a gate copy none of partition 0's principal-wide
// events (a gate that stops between partition 0's decision and the
// copies).
func HoldCopies(c *Config) { c.holdCopies = true }

// Passes returns how many passes the read model's follower of events
// partition p has begun.
func (m *ReadModel) Passes(p int32) uint64 {
	pr := m.part(p)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.started
}

// SubmitTo sends cmd, as the gate's signed internal command, to partition
// p and returns its recorded event (what a runner's command on the
// partition that decides it records, for tests without the runner).
func (h *HTTPGate) SubmitTo(ctx context.Context, cmd *domain.Command, p int32) (*domain.Event, error) {
	return h.send(ctx, cmd, p)
}
