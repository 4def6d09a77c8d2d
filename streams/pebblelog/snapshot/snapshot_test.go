package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
	"github.com/agentgate/agentgate/streams/pebblelog/snapshot"
)

// A snapshot reads the records of the log, writes nothing where the log
// is, and is removed by Close; a directory without a log is an error and
// stays without one.
func TestSnapshotIsAPrivateCopy(t *testing.T) {
	dir := t.TempDir()
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	var batch []streams.Record
	for i := 1; i <= 100; i++ {
		r := streams.Record{Seq: uint64(i), Prev: prev, Payload: []byte(`{"seq":` + itoa(i) + `}`)}
		prev = r.Hash()
		batch = append(batch, r)
	}
	if err := lg.Append(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	head := lg.Head()
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Log.Head() != head {
		t.Fatalf("snapshot head %+v, want %+v", snap.Log.Head(), head)
	}
	if err := streams.VerifyChain(context.Background(), snap.Log, 1); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the data dir gained files: %v", entries)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	if _, err := snapshot.Open(empty, nil); err == nil {
		t.Fatal("a directory without a log opened")
	}
	if _, err := os.Stat(filepath.Join(empty, "log")); !os.IsNotExist(err) {
		t.Fatalf("opening created a log: %v", err)
	}
}

func itoa(i int) string {
	b := []byte{}
	for i > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}
