package logtest_test

import (
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/logtest"
)

// TestLinkClassifiesEveryCase pins the chain rule (invariant 3 of docs/ARCHITECTURE.md), the
// one every log, reader and verifier of the project applies.
func TestLinkClassifiesEveryCase(t *testing.T) {
	h3 := streams.HashPayload(logtest.Payload(3, 40))
	head := streams.Head{Seq: 3, Hash: h3}
	cases := []struct {
		name string
		head streams.Head
		seq  uint64
		prev string
		want streams.Link
	}{
		{"the first record", streams.Head{}, 1, "", streams.LinkNext},
		{"a first record with a prev", streams.Head{}, 1, h3, streams.LinkFork},
		{"seq 0 on an empty log", streams.Head{}, 0, "", streams.LinkBehind},
		{"a gap on an empty log", streams.Head{}, 2, "", streams.LinkGap},
		{"the next record", head, 4, h3, streams.LinkNext},
		{"the next seq on another prev", head, 4, streams.HashPayload([]byte("x")), streams.LinkFork},
		{"the next seq with no prev", head, 4, "", streams.LinkFork},
		{"the head again (a retried produce)", head, 3, h3, streams.LinkBehind},
		{"a record below the head", head, 1, "", streams.LinkBehind},
		{"a gap after the head", head, 5, h3, streams.LinkGap},
	}
	for _, c := range cases {
		if got := c.head.Link(c.seq, c.prev); got != c.want {
			t.Errorf("%s: Head%+v.Link(%d, %.8q) = %d, want %d", c.name, c.head, c.seq, c.prev, got, c.want)
		}
	}
}

// TestCheckBatchNamesTheFirstBadRecord pins CheckBatch's refusals (the
// words every Append returns) and its sums.
func TestCheckBatchNamesTheFirstBadRecord(t *testing.T) {
	head := streams.Head{Seq: 2, Hash: streams.HashPayload(logtest.Payload(2, 40))}
	good := func() []streams.Record {
		return logtest.Records(head, logtest.Payload(3, 40), logtest.Payload(4, 40), logtest.Payload(5, 40))
	}
	sums := make([][sha256.Size]byte, 3)
	if err := streams.CheckBatch(head, good(), sums); err != nil {
		t.Fatalf("CheckBatch(a chain) = %v", err)
	}
	for i, r := range good() {
		if sums[i] != sha256.Sum256(r.Payload) {
			t.Fatalf("sums[%d] is not the SHA-256 of record %d's payload", i, i)
		}
	}
	gap := good()
	gap[2].Seq = 7
	badPrev := good()
	badPrev[1].Prev = "ab"
	first := good()
	first[0].Seq = 2
	cases := []struct {
		name  string
		batch []streams.Record
		want  string
	}{
		{"a gap inside the batch", gap, "record 2 has seq 7, want 5: record does not extend the log chain"},
		{"a wrong prev inside the batch", badPrev, `record 1 (seq 4) has prev "ab", want "` + good()[1].Prev + `": record does not extend the log chain`},
		{"the head's seq again", first, "record 0 has seq 2, want 3: record does not extend the log chain"},
	}
	for _, c := range cases {
		err := streams.CheckBatch(head, c.batch, make([][sha256.Size]byte, 3))
		if !errors.Is(err, streams.ErrConflict) || err.Error() != c.want {
			t.Errorf("%s: CheckBatch = %v, want %q", c.name, err, c.want)
		}
	}
}

// CheckBatch runs on every append: it allocates nothing for a batch that
// extends the chain.
func TestCheckBatchAllocatesNothing(t *testing.T) {
	payloads := make([][]byte, 64)
	for i := range payloads {
		payloads[i] = logtest.Payload(uint64(i+1), 100)
	}
	batch := logtest.Records(streams.Head{}, payloads...)
	sums := make([][sha256.Size]byte, len(batch))
	if n := testing.AllocsPerRun(10, func() {
		if err := streams.CheckBatch(streams.Head{}, batch, sums); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("CheckBatch allocated %.0f times for 64 records, want 0", n)
	}
}
