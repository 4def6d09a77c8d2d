package pebblelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/diskspace"
	"github.com/agentgate/agentgate/streams/logtest"
)

// lockedBuffer collects log lines from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) lines() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.b.String(), "\n")
}

// openFull opens a log on a FullFS with a 1 MiB reserve, logging into buf.
func openFull(t *testing.T, dir string, fs *diskspace.FullFS, buf *lockedBuffer) (*Log, error) {
	t.Helper()
	opts := testOptions(t)
	opts.FS, opts.MinFreeBytes = fs, 1<<20
	if buf != nil {
		opts.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	l, err := Open(dir, opts)
	if err == nil {
		t.Cleanup(func() { _ = l.Close() })
	}
	return l, err
}

func appendSeq(l *Log, seq uint64) error {
	return l.Append(context.Background(), logtest.Records(l.Head(), logtest.Payload(seq, 200)))
}

// fullLog opens a log on a FullFS (see openFull) holding records 1..3.
func fullLog(t *testing.T) (*Log, *diskspace.FullFS, *lockedBuffer) {
	t.Helper()
	fs := diskspace.NewFullFS(nil)
	buf := &lockedBuffer{}
	l, err := openFull(t, t.TempDir(), fs, buf)
	if err != nil {
		t.Fatal(err)
	}
	appendUpTo(t, l, 3)
	return l, fs, buf
}

// appendUpTo appends records from the head up to seq n.
func appendUpTo(t *testing.T, l *Log, n uint64) {
	t.Helper()
	for seq := l.Head().Seq + 1; seq <= n; seq++ {
		if err := appendSeq(l, seq); err != nil {
			t.Fatal(err)
		}
	}
}

// checkLog reads the whole log: records 1..n with their payloads, and a
// chain that verifies.
func checkLog(t *testing.T, l *Log, n uint64) {
	t.Helper()
	var got uint64
	err := l.Read(context.Background(), 1, func(r streams.Record) error {
		got++
		if r.Seq != got || !bytes.Equal(r.Payload, logtest.Payload(got, 200)) {
			return fmt.Errorf("record %d at position %d or its payload is wrong", r.Seq, got)
		}
		return nil
	})
	if err != nil || got != n || l.Head().Seq != n {
		t.Fatalf("read %d records, head %d, want %d: %v", got, l.Head().Seq, n, err)
	}
	if err := streams.VerifyChain(context.Background(), l, 1); err != nil {
		t.Fatalf("verifying the chain: %v", err)
	}
}

// A full disk refuses appends with ErrNoSpace, writing nothing, while
// reads go on; once space is freed the next append succeeds, without a
// reopen by the caller.
func TestFullDiskRefusesAppends(t *testing.T) {
	l, fs, buf := fullLog(t)
	fs.Fill()
	before := buf.lines()
	for range 1000 {
		if err := appendSeq(l, 4); !errors.Is(err, streams.ErrNoSpace) {
			t.Fatalf("append on a full disk: %v, want ErrNoSpace", err)
		}
	}
	if n := buf.lines() - before; n > 2 {
		t.Errorf("1000 refused appends logged %d lines, want at most 2:\n%s", n, buf.b.String())
	}
	if fs.Failed() != 0 {
		t.Errorf("%d writes reached the full disk; the guard must refuse before Pebble writes", fs.Failed())
	}
	checkLog(t, l, 3)
	fs.Free()
	if err := appendSeq(l, 4); err != nil {
		t.Fatalf("append after space returned: %v", err)
	}
	checkLog(t, l, 4)
}

// When a write fails with ENOSPC although the guard saw space (another
// process took it), Append returns ErrNoSpace rather than crashing the
// process on Pebble's fatal commit error; the log keeps reading and is
// reopened for writing once space returns, with its chain intact.
func TestENOSPCInCommitIsNotFatal(t *testing.T) {
	l, fs, _ := fullLog(t)
	fs.FailWrites()
	if err := appendSeq(l, 4); !errors.Is(err, streams.ErrNoSpace) {
		t.Fatalf("append hitting ENOSPC: %v, want ErrNoSpace", err)
	}
	if fs.Failed() == 0 {
		t.Fatal("no write failed: the test did not reach the disk")
	}
	if err := appendSeq(l, 4); !errors.Is(err, streams.ErrNoSpace) {
		t.Fatalf("append after the failed commit: %v, want ErrNoSpace", err)
	}
	checkLog(t, l, 3)
	fs.Free()
	if err := appendSeq(l, 4); err != nil {
		t.Fatalf("append after space returned: %v", err)
	}
	if err := appendSeq(l, 5); err != nil {
		t.Fatal(err)
	}
	checkLog(t, l, 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, openAt(t, l.dir), 5)
}

// Started on a full disk, the log opens read-only rather than looping on
// a flush it cannot write: it reads, refuses appends, and takes them once
// space returns.
func TestOpenOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	fs := diskspace.NewFullFS(nil)
	l, err := openFull(t, dir, fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendUpTo(t, l, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fs.Fill()
	l, err = openFull(t, dir, fs, nil)
	if err != nil {
		t.Fatalf("opening on a full disk: %v", err)
	}
	if fs.Failed() != 0 {
		t.Errorf("%d writes reached the full disk during Open", fs.Failed())
	}
	checkLog(t, l, 3)
	if err := appendSeq(l, 4); !errors.Is(err, streams.ErrNoSpace) {
		t.Fatalf("append on a full disk: %v, want ErrNoSpace", err)
	}
	fs.Free()
	if err := appendSeq(l, 4); err != nil {
		t.Fatalf("append after space returned: %v", err)
	}
	checkLog(t, l, 4)
}
