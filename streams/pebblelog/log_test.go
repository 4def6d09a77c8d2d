package pebblelog

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/logtest"
)

const testMaxRecordBytes = 2 << 20

func testOptions(t testing.TB) Options {
	return Options{
		Logger:         slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		MaxRecordBytes: testMaxRecordBytes,
	}
}

// openAt opens the log in dir and closes it when the test ends.
func openAt(t testing.TB, dir string) *Log {
	t.Helper()
	l, err := Open(dir, testOptions(t))
	if err != nil {
		t.Fatalf("opening log in %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil && !errors.Is(err, streams.ErrClosed) {
			t.Errorf("closing log: %v", err)
		}
	})
	return l
}

func TestAcceptanceSuite(t *testing.T) {
	logtest.Run(t, logtest.Suite{
		Open: func(t *testing.T) streams.Log { return openAt(t, t.TempDir()) },
		Reopen: func(t *testing.T, old streams.Log) streams.Log {
			l := old.(*Log)
			if err := l.Close(); err != nil {
				t.Fatalf("closing log: %v", err)
			}
			return openAt(t, l.dir)
		},
		ExclusiveAppend:   true,
		LargePayloadBytes: 1 << 20,
		MaxRecordBytes:    testMaxRecordBytes,
	})
}

// fill appends n records of 100 bytes in batches of 10 and closes the log,
// leaving the directory for raw edits.
func fill(t *testing.T, dir string, n int) {
	t.Helper()
	l := openAt(t, dir)
	for l.Head().Seq < uint64(n) {
		head := l.Head()
		var payloads [][]byte
		for i := head.Seq + 1; i <= min(head.Seq+10, uint64(n)); i++ {
			payloads = append(payloads, logtest.Payload(i, 100))
		}
		if err := l.Append(context.Background(), logtest.Records(head, payloads...)); err != nil {
			t.Fatalf("appending: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("closing: %v", err)
	}
}

// editRaw opens dir as a plain Pebble database and runs edit on it.
func editRaw(t *testing.T, dir string, edit func(db *pebble.DB)) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatValueSeparation})
	if err != nil {
		t.Fatalf("opening raw pebble: %v", err)
	}
	edit(db)
	if err := db.Close(); err != nil {
		t.Fatalf("closing raw pebble: %v", err)
	}
}

func rawGet(t *testing.T, db *pebble.DB, seq uint64) []byte {
	t.Helper()
	v, closer, err := db.Get(recordKey(seq))
	if err != nil {
		t.Fatalf("getting seq %d: %v", seq, err)
	}
	out := bytes.Clone(v)
	if err := closer.Close(); err != nil {
		t.Fatalf("closing get: %v", err)
	}
	return out
}

func rawSet(t *testing.T, db *pebble.DB, seq uint64, v []byte) {
	t.Helper()
	if err := db.Set(recordKey(seq), v, pebble.Sync); err != nil {
		t.Fatalf("setting seq %d: %v", seq, err)
	}
}

func wantChainError(t *testing.T, err error, seq uint64) {
	t.Helper()
	ce, ok := errors.AsType[*streams.ChainError](err)
	if !ok || !errors.Is(err, streams.ErrBrokenChain) {
		t.Fatalf("error = %v, want a *streams.ChainError", err)
	}
	if ce.Seq != seq {
		t.Fatalf("chain error at seq %d (%s), want seq %d", ce.Seq, ce.Reason, seq)
	}
}

// invariant 3 (docs/ARCHITECTURE.md): the head is recovered from the last record on Open.
func TestOpenRecoversHead(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 35)
	l := openAt(t, dir)
	want := streams.Head{Seq: 35, Hash: streams.HashPayload(logtest.Payload(35, 100))}
	if got := l.Head(); got != want {
		t.Fatalf("recovered head %+v, want %+v", got, want)
	}
}

// invariant 3 (docs/ARCHITECTURE.md), recovery: a last record whose payload no
// longer matches its hash is refused, not adopted as the head.
func TestOpenRefusesLastRecordWithWrongHash(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 20)
	editRaw(t, dir, func(db *pebble.DB) {
		v := rawGet(t, db, 20)
		v[len(v)-3] ^= 0x01
		rawSet(t, db, 20, v)
	})
	_, err := Open(dir, testOptions(t))
	wantChainError(t, err, 20)
}

// invariant 3 (docs/ARCHITECTURE.md), recovery: the last record's Prev must be
// the hash of the record before it.
func TestOpenRefusesLastRecordWithWrongPrev(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 20)
	editRaw(t, dir, func(db *pebble.DB) {
		v := rawGet(t, db, 20)
		v[1] ^= 0x01
		rawSet(t, db, 20, v)
	})
	_, err := Open(dir, testOptions(t))
	wantChainError(t, err, 20)
}

// invariant 3 (docs/ARCHITECTURE.md), recovery: a gap just before the last record is refused.
func TestOpenRefusesGapBeforeLastRecord(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 20)
	editRaw(t, dir, func(db *pebble.DB) {
		if err := db.Delete(recordKey(19), pebble.Sync); err != nil {
			t.Fatalf("deleting: %v", err)
		}
	})
	_, err := Open(dir, testOptions(t))
	wantChainError(t, err, 19)
}

// Invariant 5 (docs/ARCHITECTURE.md: fail closed): a malformed stored header is refused.
func TestOpenRefusesMalformedHeader(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 3)
	editRaw(t, dir, func(db *pebble.DB) { rawSet(t, db, 3, []byte{0x01, 0x02}) })
	_, err := Open(dir, testOptions(t))
	wantChainError(t, err, 3)
}

// The log refuses to adopt a directory written by something else.
func TestOpenRefusesForeignDatabase(t *testing.T) {
	dir := t.TempDir()
	editRaw(t, dir, func(db *pebble.DB) {
		if err := db.Set([]byte("projection/agent/a1"), []byte("{}"), pebble.Sync); err != nil {
			t.Fatalf("setting: %v", err)
		}
	})
	if _, err := Open(dir, testOptions(t)); err == nil {
		t.Fatal("opened a foreign pebble database as a log")
	}

	dir = t.TempDir()
	fill(t, dir, 1)
	editRaw(t, dir, func(db *pebble.DB) {
		if err := db.Set(formatKey, []byte("agentgate.pebblelog.v0"), pebble.Sync); err != nil {
			t.Fatalf("setting: %v", err)
		}
	})
	if _, err := Open(dir, testOptions(t)); err == nil {
		t.Fatal("opened a log of another format version")
	}
}

// invariant 3 (docs/ARCHITECTURE.md): VerifyChain reports the first broken
// position of a real log whose middle was damaged on disk (the head itself is
// intact, so Open succeeds).
func TestVerifyChainFindsDamagedMiddle(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(t *testing.T, db *pebble.DB)
		wantSeq uint64
	}{
		{"payload of seq 40 altered", func(t *testing.T, db *pebble.DB) {
			v := rawGet(t, db, 40)
			v[headerLen] ^= 0x20
			rawSet(t, db, 40, v)
		}, 41},
		{"prev of seq 40 altered", func(t *testing.T, db *pebble.DB) {
			v := rawGet(t, db, 40)
			v[5] ^= 0x01
			rawSet(t, db, 40, v)
		}, 40},
		{"seq 40 deleted", func(t *testing.T, db *pebble.DB) {
			if err := db.Delete(recordKey(40), pebble.Sync); err != nil {
				t.Fatalf("deleting: %v", err)
			}
		}, 40},
		{"seq 1 given a prev", func(t *testing.T, db *pebble.DB) {
			v := rawGet(t, db, 1)
			v[0] = flagHasPrev
			v[1] = 0x01
			rawSet(t, db, 1, v)
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fill(t, dir, 80)
			editRaw(t, dir, func(db *pebble.DB) { c.edit(t, db) })
			l := openAt(t, dir)
			wantChainError(t, streams.VerifyChain(context.Background(), l, 1), c.wantSeq)
			if c.wantSeq > 2 {
				if err := streams.VerifyChain(context.Background(), l, c.wantSeq+2); err != nil {
					t.Fatalf("verifying after the damage: %v", err)
				}
			}
		})
	}
}

// Limits (invariant 7, docs/ARCHITECTURE.md): the batch limits hold on both sides.
func TestAppendBatchLimits(t *testing.T) {
	opts := testOptions(t)
	opts.MaxBatchRecords = 4
	opts.MaxBatchBytes = 1000
	l, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("opening: %v", err)
	}
	defer func() { _ = l.Close() }()
	ctx := context.Background()

	five := logtest.Records(l.Head(), logtest.Payload(1, 10), logtest.Payload(2, 10), logtest.Payload(3, 10), logtest.Payload(4, 10), logtest.Payload(5, 10))
	if err := l.Append(ctx, five); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("appending 5 records with a limit of 4 = %v, want ErrTooLarge", err)
	}
	if err := l.Append(ctx, five[:4]); err != nil {
		t.Fatalf("appending 4 records with a limit of 4: %v", err)
	}

	over := logtest.Records(l.Head(), logtest.Payload(5, 500), logtest.Payload(6, 501))
	if err := l.Append(ctx, over); !errors.Is(err, streams.ErrTooLarge) {
		t.Fatalf("appending 1001 bytes with a limit of 1000 = %v, want ErrTooLarge", err)
	}
	at := logtest.Records(l.Head(), logtest.Payload(5, 500), logtest.Payload(6, 500))
	if err := l.Append(ctx, at); err != nil {
		t.Fatalf("appending 1000 bytes with a limit of 1000: %v", err)
	}
	if got := l.Head().Seq; got != 6 {
		t.Fatalf("head seq %d, want 6", got)
	}
}

// A waiting Append honours its context while another Append holds the
// write slot, and writes nothing.
func TestAppendWaitHonoursContext(t *testing.T) {
	l := openAt(t, t.TempDir())
	l.writing <- struct{}{} // an Append in progress
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Append(ctx, logtest.Records(l.Head(), logtest.Payload(1, 10))) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting Append = %v, want context.Canceled", err)
	}
	<-l.writing
	if got := l.Head().Seq; got != 0 {
		t.Fatalf("head seq %d after a cancelled Append, want 0", got)
	}
}
