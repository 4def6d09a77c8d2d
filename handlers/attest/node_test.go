package attest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestNodeIDMintedOnceAndKept pins the one node ID of a data directory, as
// both deployments (embedded.OpenGate, serve on Kafka) and export read it:
// minted on first use, durably, then returned unchanged; an empty file is
// replaced; ReadNodeID never mints.
func TestNodeIDMintedOnceAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := ReadNodeID(dir); err == nil {
		t.Fatal("ReadNodeID of a fresh directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, nodeIDFile)); !os.IsNotExist(err) {
		t.Fatalf("ReadNodeID created the file: %v", err)
	}
	id, err := NodeID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^node_[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("node id %q", id)
	}
	fi, err := os.Stat(filepath.Join(dir, nodeIDFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("node_id file: %v, mode %v", err, fi.Mode())
	}
	for range 2 {
		again, err := NodeID(dir)
		if err != nil || again != id {
			t.Fatalf("second NodeID %q, %v; want %q", again, err, id)
		}
		read, err := ReadNodeID(dir)
		if err != nil || read != id {
			t.Fatalf("ReadNodeID %q, %v; want %q", read, err, id)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("data dir holds %d entries, want node_id alone", len(ents))
	}
	// A recorded ID of another form (an older Kafka node's) is kept as is.
	if err := os.WriteFile(filepath.Join(dir, nodeIDFile), []byte("node_Ab-x_0123456789z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := NodeID(dir); err != nil || got != "node_Ab-x_0123456789z" {
		t.Fatalf("recorded id: %q, %v", got, err)
	}
	// An empty file: ReadNodeID refuses, NodeID mints a new one.
	if err := os.WriteFile(filepath.Join(dir, nodeIDFile), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadNodeID(dir); err == nil {
		t.Fatal("ReadNodeID accepted an empty node_id")
	}
	if got, err := NodeID(dir); err != nil || got == "" || got == id {
		t.Fatalf("NodeID over an empty file: %q, %v", got, err)
	}
}
