package streams_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentgate/agentgate/streams"
)

// sliceLog is a Log over a slice that accepts any records, broken chains
// included, so VerifyChain can be shown the damage it must find. Append
// does not check the chain; Head reports the last record.
type sliceLog struct {
	records []streams.Record
	head    streams.Head
	readErr error
}

func (l *sliceLog) Append(_ context.Context, batch []streams.Record) error {
	l.records = append(l.records, batch...)
	last := batch[len(batch)-1]
	l.head = streams.Head{Seq: last.Seq, Hash: last.Hash()}
	return nil
}

func (l *sliceLog) Head() streams.Head { return l.head }

func (l *sliceLog) Read(ctx context.Context, from uint64, fn func(streams.Record) error) error {
	for _, r := range l.records {
		if r.Seq < from {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return l.readErr
}

func (l *sliceLog) Close() error { return nil }

// chain returns n well-chained records.
func chain(n int) []streams.Record {
	out := make([]streams.Record, n)
	prev := ""
	for i := range out {
		p := fmt.Appendf(nil, `{"seq":%d}`, i+1)
		out[i] = streams.Record{Seq: uint64(i + 1), Prev: prev, Payload: p}
		prev = streams.HashPayload(p)
	}
	return out
}

func logOf(records []streams.Record) *sliceLog {
	l := &sliceLog{}
	if len(records) > 0 {
		_ = l.Append(context.Background(), records)
	}
	return l
}

// invariant 3 (docs/ARCHITECTURE.md): VerifyChain accepts an intact chain from
// any position.
func TestVerifyChainAcceptsIntactChain(t *testing.T) {
	l := logOf(chain(10))
	for _, from := range []uint64{0, 1, 2, 5, 10, 11, 100} {
		if err := streams.VerifyChain(context.Background(), l, from); err != nil {
			t.Fatalf("VerifyChain from %d = %v, want nil", from, err)
		}
	}
	if err := streams.VerifyChain(context.Background(), logOf(nil), 1); err != nil {
		t.Fatalf("VerifyChain of an empty log = %v, want nil", err)
	}
}

// invariant 3 (docs/ARCHITECTURE.md): VerifyChain reports the first broken position.
func TestVerifyChainReportsFirstBrokenPosition(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(rs []streams.Record) []streams.Record
		from    uint64
		wantSeq uint64
	}{
		{"wrong prev at 4", func(rs []streams.Record) []streams.Record {
			rs[3].Prev = rs[1].Hash()
			return rs
		}, 1, 4},
		{"payload of 4 altered", func(rs []streams.Record) []streams.Record {
			rs[3].Payload = []byte(`{"seq":"forged"}`)
			return rs
		}, 1, 5},
		{"gap at 6", func(rs []streams.Record) []streams.Record {
			return append(rs[:5:5], rs[6:]...)
		}, 1, 6},
		{"duplicate 3", func(rs []streams.Record) []streams.Record {
			return append(rs[:3:3], rs[2:]...)
		}, 1, 3},
		{"first record with a prev", func(rs []streams.Record) []streams.Record {
			rs[0].Prev = streams.HashPayload([]byte("genesis"))
			return rs
		}, 1, 1},
		{"log starting at 2", func(rs []streams.Record) []streams.Record { return rs[1:] }, 1, 1},
		{"two breaks, the first reported", func(rs []streams.Record) []streams.Record {
			rs[7].Prev = ""
			rs[2].Prev = ""
			return rs
		}, 1, 3},
		{"break before from is not reported", func(rs []streams.Record) []streams.Record {
			rs[2].Prev = ""
			rs[7].Prev = ""
			return rs
		}, 5, 8},
		{"anchor record missing", func(rs []streams.Record) []streams.Record {
			return append(rs[:3:3], rs[4:]...)
		}, 5, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := logOf(c.damage(chain(10)))
			err := streams.VerifyChain(context.Background(), l, c.from)
			ce, ok := errors.AsType[*streams.ChainError](err)
			if !ok || !errors.Is(err, streams.ErrBrokenChain) {
				t.Fatalf("VerifyChain = %v, want a *ChainError", err)
			}
			if ce.Seq != c.wantSeq {
				t.Fatalf("broken at seq %d (%s), want %d", ce.Seq, ce.Reason, c.wantSeq)
			}
		})
	}
}

// invariant 3 (docs/ARCHITECTURE.md): a log whose records stop short of its
// head, or whose last record does not hash to the head, is broken.
func TestVerifyChainChecksTheHead(t *testing.T) {
	rs := chain(10)
	l := logOf(rs)
	l.records = l.records[:8] // head says 10, records end at 8
	wantSeq(t, streams.VerifyChain(context.Background(), l, 1), 9)

	l = logOf(rs)
	l.head.Hash = streams.HashPayload([]byte("another tail"))
	wantSeq(t, streams.VerifyChain(context.Background(), l, 1), 10)
}

func wantSeq(t *testing.T, err error, seq uint64) {
	t.Helper()
	ce, ok := errors.AsType[*streams.ChainError](err)
	if !ok || ce.Seq != seq {
		t.Fatalf("VerifyChain = %v, want a *ChainError at seq %d", err, seq)
	}
}

// Read and context errors are returned as such, not as a broken chain.
func TestVerifyChainReturnsReadErrors(t *testing.T) {
	l := logOf(chain(5))
	l.readErr = errors.New("disk gone")
	err := streams.VerifyChain(context.Background(), l, 1)
	if !errors.Is(err, l.readErr) || errors.Is(err, streams.ErrBrokenChain) {
		t.Fatalf("VerifyChain = %v, want the read error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = streams.VerifyChain(ctx, logOf(chain(5)), 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyChain with a cancelled context = %v, want context.Canceled", err)
	}
}
