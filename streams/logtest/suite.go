package logtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/streams"
)

// Suite describes a streams.Log implementation to Run.
type Suite struct {
	// Open returns a new, empty log. It must arrange (t.Cleanup) for the
	// log to be closed at the end of the test, tolerating
	// streams.ErrClosed from a log the test already closed.
	Open func(t *testing.T) streams.Log
	// Reopen closes old and opens the same storage again, with the same
	// cleanup obligation as Open. Nil for a log that is not persistent:
	// the durability tests are skipped.
	Reopen func(t *testing.T, old streams.Log) streams.Log
	// ExclusiveAppend claims that concurrent Appends are serialized: of
	// two writers racing for the same position exactly one wins and the
	// other gets streams.ErrConflict.
	ExclusiveAppend bool
	// LargePayloadBytes is the payload size of the large-payload test;
	// zero means 1 MiB.
	LargePayloadBytes int
	// MaxRecordBytes is the implementation's limit on one payload, tested
	// on both sides (a payload of exactly the limit is stored, one byte
	// more gets streams.ErrTooLarge); zero skips the test.
	MaxRecordBytes int
}

// Records returns records carrying payloads that extend the chain at head:
// Seq head.Seq+1, +2, … and each Prev the hash of the previous payload.
func Records(head streams.Head, payloads ...[]byte) []streams.Record {
	out := make([]streams.Record, len(payloads))
	seq, prev := head.Seq, head.Hash
	for i, p := range payloads {
		seq++
		out[i] = streams.Record{Seq: seq, Prev: prev, Payload: p}
		prev = streams.HashPayload(p)
	}
	return out
}

// Payload returns a deterministic payload of n bytes (at least the length
// of its label) for position seq, so a test can recognise what it reads.
func Payload(seq uint64, n int) []byte {
	label := fmt.Sprintf(`{"seq":%d,"pad":"`, seq)
	if n < len(label)+2 {
		n = len(label) + 2
	}
	p := make([]byte, n)
	copy(p, label)
	for i := len(label); i < n-2; i++ {
		p[i] = 'a' + byte((uint64(i)+seq)%26)
	}
	copy(p[n-2:], `"}`)
	return p
}

// Run runs the acceptance suite against s.
func Run(t *testing.T, s Suite) {
	if s.Open == nil {
		t.Fatal("logtest.Suite.Open is nil")
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s Suite)
	}{
		{"EmptyLogHasZeroHead", testEmptyHead},
		{"AppendThenReadInOrder", testAppendRead},
		{"EmptyBatchIsNoOp", testEmptyBatch},
		{"ConflictWrongSeqWritesNothing", testConflictWrongSeq},
		{"ConflictWrongPrevWritesNothing", testConflictWrongPrev},
		{"ConflictGapInsideBatchWritesNothing", testConflictGapInBatch},
		{"ConflictBadPrevInsideBatchWritesNothing", testConflictPrevInBatch},
		{"ReadFromMiddle", testReadFromMiddle},
		{"ReadSeesWholeBatchesDuringAppend", testReadDuringAppend},
		{"RacingWritersOneWins", testRacingWriters},
		{"AppendCopiesPayloads", testAppendCopies},
		{"LargePayload", testLargePayload},
		{"RecordLimitBothSides", testRecordLimit},
		{"ReadStopsOnContextCancel", testReadCancel},
		{"ReadStopsOnCallbackError", testReadCallbackError},
		{"AppendWithCancelledContextWritesNothing", testAppendCancelled},
		{"DurableAcrossReopen", testReopen},
		{"ClosedLogAnswersErrClosed", testClosed},
		{"VerifyChainAcceptsTheLog", testVerifyChain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, s) })
	}
}

// appendN appends n records of size bytes in batches of batchSize.
func appendN(t *testing.T, l streams.Log, n, batchSize, size int) {
	t.Helper()
	for n > 0 {
		k := min(batchSize, n)
		head := l.Head()
		payloads := make([][]byte, k)
		for i := range payloads {
			payloads[i] = Payload(head.Seq+uint64(i)+1, size)
		}
		if err := l.Append(context.Background(), Records(head, payloads...)); err != nil {
			t.Fatalf("appending %d records at seq %d: %v", k, head.Seq+1, err)
		}
		n -= k
	}
}

// readAll returns copies of the records from seq from.
func readAll(t *testing.T, l streams.Log, from uint64) []streams.Record {
	t.Helper()
	var out []streams.Record
	err := l.Read(context.Background(), from, func(r streams.Record) error {
		r.Payload = bytes.Clone(r.Payload)
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatalf("reading from seq %d: %v", from, err)
	}
	return out
}

// checkRange asserts that got is exactly the chain [from, to] written by
// appendN with payload size size.
func checkRange(t *testing.T, got []streams.Record, from, to uint64, size int) {
	t.Helper()
	if want := int(to - from + 1); to < from && len(got) != 0 || to >= from && len(got) != want {
		t.Fatalf("read %d records, want seq %d..%d", len(got), from, to)
	}
	for i, r := range got {
		seq := from + uint64(i)
		if r.Seq != seq {
			t.Fatalf("record %d has seq %d, want %d", i, r.Seq, seq)
		}
		if want := Payload(seq, size); !bytes.Equal(r.Payload, want) {
			t.Fatalf("seq %d payload = %.40q…, want %.40q…", seq, r.Payload, want)
		}
		wantPrev := ""
		if seq > 1 {
			wantPrev = streams.HashPayload(Payload(seq-1, size))
		}
		if r.Prev != wantPrev {
			t.Fatalf("seq %d prev = %q, want %q", seq, r.Prev, wantPrev)
		}
	}
}

func checkHead(t *testing.T, l streams.Log, seq uint64, size int) {
	t.Helper()
	want := streams.Head{}
	if seq > 0 {
		want = streams.Head{Seq: seq, Hash: streams.HashPayload(Payload(seq, size))}
	}
	if got := l.Head(); got != want {
		t.Fatalf("head = %+v, want %+v", got, want)
	}
}

func testEmptyHead(t *testing.T, s Suite) {
	l := s.Open(t)
	checkHead(t, l, 0, 0)
	for _, from := range []uint64{0, 1, 2} {
		if got := readAll(t, l, from); len(got) != 0 {
			t.Fatalf("empty log: read from %d returned %d records", from, len(got))
		}
	}
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying an empty log: %v", err)
	}
}

func testAppendRead(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 1, 1, 100)
	checkHead(t, l, 1, 100)
	appendN(t, l, 63, 21, 100)
	checkHead(t, l, 64, 100)
	checkRange(t, readAll(t, l, 1), 1, 64, 100)
	checkRange(t, readAll(t, l, 0), 1, 64, 100)
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying the chain: %v", err)
	}
}

func testEmptyBatch(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 3, 3, 50)
	if err := l.Append(context.Background(), nil); err != nil {
		t.Fatalf("appending an empty batch: %v", err)
	}
	checkHead(t, l, 3, 50)
	checkRange(t, readAll(t, l, 1), 1, 3, 50)
}

// expectConflict appends batch, expects ErrConflict and an unchanged log
// of n records, then proves the log still accepts a correct append.
func expectConflict(t *testing.T, l streams.Log, batch []streams.Record, n uint64) {
	t.Helper()
	// The log refuses the batch with the one chain check's words.
	want := streams.CheckBatch(l.Head(), batch, make([][sha256.Size]byte, len(batch)))
	if want == nil {
		t.Fatal("the test's batch extends the chain")
	}
	err := l.Append(context.Background(), batch)
	if !errors.Is(err, streams.ErrConflict) || !strings.Contains(err.Error(), want.Error()) {
		t.Fatalf("Append = %v, want ErrConflict saying %q", err, want)
	}
	checkHead(t, l, n, 50)
	checkRange(t, readAll(t, l, 1), 1, n, 50)
	appendN(t, l, 2, 2, 50)
	checkHead(t, l, n+2, 50)
	checkRange(t, readAll(t, l, 1), 1, n+2, 50)
}

func testConflictWrongSeq(t *testing.T, s Suite) {
	l := s.Open(t)
	// On an empty log the first record must be seq 1 with prev "".
	expectConflict(t, l, []streams.Record{{Seq: 2, Payload: Payload(2, 50)}}, 0)
	appendN(t, l, 3, 3, 50) // head 5
	seqs := []struct {
		name string
		seq  func(head uint64) uint64
	}{
		{"the head again", func(h uint64) uint64 { return h }},
		{"a gap after the head", func(h uint64) uint64 { return h + 2 }},
		{"seq 0", func(uint64) uint64 { return 0 }},
		{"seq 1 again", func(uint64) uint64 { return 1 }},
	}
	for _, c := range seqs {
		head := l.Head()
		seq := c.seq(head.Seq)
		t.Logf("appending %s (seq %d) onto head %d", c.name, seq, head.Seq)
		r := streams.Record{Seq: seq, Prev: head.Hash, Payload: Payload(seq, 50)}
		expectConflict(t, l, []streams.Record{r}, head.Seq)
	}
}

func testConflictWrongPrev(t *testing.T, s Suite) {
	l := s.Open(t)
	expectConflict(t, l, []streams.Record{{Seq: 1, Prev: streams.HashPayload([]byte("x")), Payload: Payload(1, 50)}}, 0)
	head := l.Head()
	for _, prev := range []string{"", streams.HashPayload([]byte("not the head")), head.Hash[:10]} {
		head = l.Head()
		r := streams.Record{Seq: head.Seq + 1, Prev: prev, Payload: Payload(head.Seq+1, 50)}
		expectConflict(t, l, []streams.Record{r}, head.Seq)
	}
}

func testConflictGapInBatch(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 4, 4, 50)
	head := l.Head()
	payloads := [][]byte{Payload(5, 50), Payload(6, 50), Payload(7, 50), Payload(8, 50)}
	batch := Records(head, payloads...)
	batch[3].Seq = 9 // a gap before the last record
	expectConflict(t, l, batch, 4)

	head = l.Head()
	batch = Records(head, Payload(7, 50), Payload(8, 50), Payload(9, 50))
	batch[2].Seq = 8 // a duplicate seq inside the batch
	expectConflict(t, l, batch, 6)
}

func testConflictPrevInBatch(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 2, 2, 50)
	batch := Records(l.Head(), Payload(3, 50), Payload(4, 50), Payload(5, 50), Payload(6, 50), Payload(7, 50))
	batch[4].Prev = batch[3].Prev // the last record points two back
	expectConflict(t, l, batch, 2)
}

func testReadFromMiddle(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 100, 30, 64)
	for _, from := range []uint64{2, 31, 50, 99, 100} {
		checkRange(t, readAll(t, l, from), from, 100, 64)
		if err := streams.VerifyChain(context.Background(), l, from); err != nil {
			t.Fatalf("verifying from %d: %v", from, err)
		}
	}
	for _, from := range []uint64{101, 1000} {
		if got := readAll(t, l, from); len(got) != 0 {
			t.Fatalf("read from %d beyond head 100 returned %d records", from, len(got))
		}
	}
}

func testReadDuringAppend(t *testing.T, s Suite) {
	const batches, batchSize, size = 60, 8, 200
	l := s.Open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var writeErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range batches {
			head := l.Head()
			payloads := make([][]byte, batchSize)
			for i := range payloads {
				payloads[i] = Payload(head.Seq+uint64(i)+1, size)
			}
			if err := l.Append(ctx, Records(head, payloads...)); err != nil {
				writeErr = err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var reads atomic.Int64
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				before := l.Head().Seq
				var n uint64
				err := l.Read(ctx, 1, func(r streams.Record) error {
					n++
					if r.Seq != n {
						return fmt.Errorf("read seq %d at position %d", r.Seq, n)
					}
					if want := Payload(n, size); !bytes.Equal(r.Payload, want) {
						return fmt.Errorf("seq %d: payload differs", n)
					}
					return nil
				})
				if err == nil && n < before {
					err = fmt.Errorf("read %d records, head was %d before the read", n, before)
				}
				if err == nil && n%batchSize != 0 {
					err = fmt.Errorf("read ended at seq %d, inside a batch of %d", n, batchSize)
				}
				if err != nil {
					errs <- err
					return
				}
				reads.Add(1)
			}
		})
	}
	<-done
	wg.Wait()
	close(errs)
	if writeErr != nil {
		t.Fatalf("appending: %v", writeErr)
	}
	for err := range errs {
		t.Fatalf("concurrent read: %v", err)
	}
	if reads.Load() == 0 {
		t.Fatal("no read completed while appending")
	}
	checkRange(t, readAll(t, l, 1), 1, batches*batchSize, size)
}

func testRacingWriters(t *testing.T, s Suite) {
	if !s.ExclusiveAppend {
		t.Skip("the implementation does not claim ExclusiveAppend")
	}
	const writers, rounds = 4, 25
	l := s.Open(t)
	for round := range rounds {
		head := l.Head()
		var wins, conflicts atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				p := fmt.Appendf(nil, `{"round":%d,"writer":%d}`, round, w)
				err := l.Append(context.Background(), Records(head, p))
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, streams.ErrConflict):
					conflicts.Add(1)
				default:
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: racing Append: %v", round, err)
		}
		if wins.Load() != 1 || conflicts.Load() != writers-1 {
			t.Fatalf("round %d: %d writers won and %d got ErrConflict, want 1 and %d", round, wins.Load(), conflicts.Load(), writers-1)
		}
		if got := l.Head().Seq; got != head.Seq+1 {
			t.Fatalf("round %d: head seq %d, want %d", round, got, head.Seq+1)
		}
	}
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying after racing writers: %v", err)
	}
}

func testAppendCopies(t *testing.T, s Suite) {
	l := s.Open(t)
	p := Payload(1, 80)
	if err := l.Append(context.Background(), Records(l.Head(), p)); err != nil {
		t.Fatalf("appending: %v", err)
	}
	for i := range p {
		p[i] = 'X'
	}
	checkRange(t, readAll(t, l, 1), 1, 1, 80)
}

func testLargePayload(t *testing.T, s Suite) {
	size := s.LargePayloadBytes
	if size == 0 {
		size = 1 << 20
	}
	l := s.Open(t)
	appendN(t, l, 1, 1, 100)
	big := Payload(2, size)
	if err := l.Append(context.Background(), Records(l.Head(), big, Payload(3, 100))); err != nil {
		t.Fatalf("appending a %d-byte payload: %v", size, err)
	}
	got := readAll(t, l, 2)
	if len(got) != 2 || !bytes.Equal(got[0].Payload, big) || got[1].Prev != streams.HashPayload(big) {
		t.Fatalf("large payload did not round-trip (%d records read)", len(got))
	}
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying: %v", err)
	}
}

func testRecordLimit(t *testing.T, s Suite) {
	if s.MaxRecordBytes == 0 {
		t.Skip("no MaxRecordBytes given")
	}
	l := s.Open(t)
	over := Records(l.Head(), Payload(1, 10), Payload(2, s.MaxRecordBytes+1))
	if err := l.Append(context.Background(), over); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("appending a payload of limit+1 bytes = %v, want ErrTooLarge", err)
	}
	checkHead(t, l, 0, 0)
	at := Records(l.Head(), Payload(1, 10), Payload(2, s.MaxRecordBytes))
	if err := l.Append(context.Background(), at); err != nil {
		t.Fatalf("appending a payload of exactly the limit: %v", err)
	}
	if got := readAll(t, l, 1); len(got) != 2 || len(got[1].Payload) != s.MaxRecordBytes {
		t.Fatalf("payload at the limit did not round-trip")
	}
}

func testReadCancel(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 20, 20, 50)

	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := l.Read(ctx, 1, func(streams.Record) error {
		calls++
		if calls == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Read after cancel = %v, want context.Canceled", err)
	}
	if calls != 3 {
		t.Fatalf("callback ran %d times, want 3 (none after the cancel)", calls)
	}

	calls = 0
	err = l.Read(ctx, 1, func(streams.Record) error { calls++; return nil })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("Read with a cancelled context = %v after %d callbacks, want context.Canceled and none", err, calls)
	}
}

func testReadCallbackError(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 10, 10, 50)
	stop := errors.New("stop here")
	var seen []uint64
	err := l.Read(context.Background(), 1, func(r streams.Record) error {
		seen = append(seen, r.Seq)
		if r.Seq == 4 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Read = %v, want the callback's error", err)
	}
	if len(seen) != 4 || seen[3] != 4 {
		t.Fatalf("callback saw %v, want seq 1..4", seen)
	}
}

func testAppendCancelled(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 2, 2, 50)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Append(ctx, Records(l.Head(), Payload(3, 50)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context = %v, want context.Canceled", err)
	}
	checkHead(t, l, 2, 50)
	checkRange(t, readAll(t, l, 1), 1, 2, 50)
}

func testReopen(t *testing.T, s Suite) {
	if s.Reopen == nil {
		t.Skip("the log is not persistent")
	}
	l := s.Open(t)
	l = s.Reopen(t, l)
	checkHead(t, l, 0, 0) // an empty log reopens empty
	appendN(t, l, 130, 64, 300)
	l = s.Reopen(t, l)
	checkHead(t, l, 130, 300)
	checkRange(t, readAll(t, l, 1), 1, 130, 300)
	appendN(t, l, 5, 5, 300) // the reopened log extends the same chain
	l = s.Reopen(t, l)
	checkHead(t, l, 135, 300)
	checkRange(t, readAll(t, l, 1), 1, 135, 300)
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying after reopen: %v", err)
	}
	// A stale writer that kept the old head is refused after the reopen.
	stale := Records(streams.Head{Seq: 130, Hash: streams.HashPayload(Payload(130, 300))}, Payload(131, 300))
	if err := l.Append(context.Background(), stale); !errors.Is(err, streams.ErrConflict) {
		t.Fatalf("stale append after reopen = %v, want ErrConflict", err)
	}
}

func testClosed(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 3, 3, 50)
	if err := l.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
	if err := l.Append(context.Background(), Records(streams.Head{Seq: 3, Hash: streams.HashPayload(Payload(3, 50))}, Payload(4, 50))); !errors.Is(err, streams.ErrClosed) {
		t.Fatalf("Append after Close = %v, want ErrClosed", err)
	}
	calls := 0
	if err := l.Read(context.Background(), 1, func(streams.Record) error { calls++; return nil }); !errors.Is(err, streams.ErrClosed) || calls != 0 {
		t.Fatalf("Read after Close = %v after %d callbacks, want ErrClosed and none", err, calls)
	}
	if err := l.Close(); !errors.Is(err, streams.ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
}

// testVerifyChain checks that streams.VerifyChain, the chain check the
// audit and recovery use, accepts what the log stored, from every start.
func testVerifyChain(t *testing.T, s Suite) {
	l := s.Open(t)
	appendN(t, l, 9, 4, 80)
	for from := uint64(0); from <= 10; from++ {
		if err := streams.VerifyChain(context.Background(), l, from); err != nil {
			t.Fatalf("VerifyChain(from %d) = %v, want nil", from, err)
		}
	}
}
