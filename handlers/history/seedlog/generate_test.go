package seedlog_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/handlers/history/seedlog"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// A generated log is a chain the audit verifier accepts: seq, prev,
// checkpoint signatures and cadence.
func TestGenerateWritesAVerifiableChain(t *testing.T) {
	dir := t.TempDir()
	ids, err := seedlog.Generate(context.Background(), dir, seedlog.GenOptions{
		Agents: 3, Events: 5000, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Step: 200 * time.Millisecond, CheckpointEvents: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 3 {
		t.Fatalf("agents %v", ids)
	}
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	rep, err := audit.Verify(context.Background(), audit.LogSource(lg, 0), kr.JWKS(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("break: %v", rep.Break)
	}
	p := rep.Partitions[0]
	if p.Events != 3+5000+5 || p.Checkpoints != 5 {
		t.Fatalf("partition %+v", p)
	}
}
