package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// TestReplayVerifyDetectsRewrittenDecision rewrites one recorded decision
// (re-chaining the log so the chain itself is intact) and checks that
// re-deciding reports it: a log an operator edited does not pass.
func TestReplayVerifyDetectsRewrittenDecision(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	reg := gatetest.Register("r1", 1)
	agent := g.Submit(t, reg).Registered.AgentID
	// A medium-risk action at trust 1 is PENDING; we will rewrite it to APPROVED.
	cmd := gatetest.Verify(agent, "v1", "c1", 1, "x")
	cmd.Verify.Action.Type = "api_call"
	target := g.Submit(t, cmd)
	if target.Decided.Decision != domain.Pending {
		t.Fatalf("decision %s, want PENDING", target.Decided.Decision)
	}
	for i := 2; i <= 5; i++ {
		g.Submit(t, gatetest.Verify(agent, fmt.Sprint("v", i), "c1", i, fmt.Sprint(i)))
	}
	ctx := context.Background()
	rep, err := replay.Replay(ctx, g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("untampered replay: %+v %v", rep, err)
	}

	forged, err := pebblelog.Open(filepath.Join(t.TempDir(), "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer forged.Close()
	var batch []streams.Record
	prev := ""
	err = g.Log.Read(ctx, 1, func(r streams.Record) error {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return err
		}
		if ev.Seq == target.Seq {
			ev.Decided.Decision = domain.Approved
		}
		ev.Prev = prev
		p, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		rec := streams.Record{Seq: ev.Seq, Prev: prev, Payload: p}
		prev = rec.Hash()
		batch = append(batch, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Stop(t)
	if err := forged.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := streams.VerifyChain(ctx, forged, 1); err != nil {
		t.Fatalf("the forged log should chain correctly: %v", err)
	}
	store, err := projections.Open(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := handlers.ApplyLog(ctx, forged, store, domain.NewState(), projections.Checkpoint{}); err != nil {
		t.Fatal(err)
	}
	rep, err = replay.Replay(ctx, forged, store, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Mismatches) == 0 {
		t.Fatalf("re-deciding did not notice the rewritten decision: %+v", rep)
	}
	if !strings.Contains(rep.Mismatches[0], fmt.Sprintf("seq %d", target.Seq)) || !strings.Contains(rep.Mismatches[0], "decision APPROVED, re-decided PENDING") {
		t.Fatalf("first mismatch %q, want the rewritten decision at seq %d", rep.Mismatches[0], target.Seq)
	}
}

// TestReplayVerifyDetectsADifferentAttestation: re-deciding with a signer
// that is not the one that signed (another key) reproduces the decisions
// but not their attestations, and replay --verify says so; with the
// gate's own key the attestations are byte-identical (RFC 6979).
func TestReplayVerifyDetectsADifferentAttestation(t *testing.T) {
	dir := t.TempDir()
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, dir, clock.Now)
	agent := g.Submit(t, gatetest.Register("r1", 3)).Registered.AgentID
	cmd := gatetest.Verify(agent, "v1", "c1", 1, "x")
	cmd.Verify.Options.RequireAttestation = true
	target := g.Submit(t, cmd)
	if target.Decided.Decision != domain.Approved || target.Decided.Attestation == "" {
		t.Fatalf("decision %s attestation %q, want APPROVED with an attestation", target.Decided.Decision, target.Decided.Attestation)
	}
	ctx := context.Background()
	rep, err := replay.Replay(ctx, g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("with the gate's key: %+v %v", rep, err)
	}
	other, err := attest.OpenKeyring(filepath.Join(t.TempDir(), "keys"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err = replay.Replay(ctx, g.Log, g.Store, true, other.SignerFor(g.NodeID))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("seq %d (%s): attestation differs", target.Seq, domain.EvActionDecided)
	if rep.OK() || !slices.Contains(rep.Mismatches, want) {
		t.Fatalf("mismatches %q, want %q", rep.Mismatches, want)
	}
	g.Stop(t)
}

// TestReplayVerifyReproducesARejectionWithFindings records a refused
// request whose error details hold findings (written in struct order, as
// the code engine's SEC-002 refusal has them) and a map, and checks that
// replay --verify re-decides it to the same bytes: the decoded details
// must encode back as they were read.
func TestReplayVerifyReproducesARejectionWithFindings(t *testing.T) {
	clock := gatetest.NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	g := gatetest.Start(t, t.TempDir(), clock.Now)
	agent := g.Submit(t, gatetest.Register("r1", 1)).Registered.AgentID
	details := domain.Details{
		"findings": []engines.Finding{{Rule: "py.eval", Severity: "critical", Message: "eval of input", Line: 3, Column: 7, Snippet: "eval(x)"}},
		"language": "python", "limits": map[string]any{"z": 1, "a": json.Number("2.50")},
	}
	ev := g.Submit(t, &domain.Command{Type: domain.CmdRejectRequest, Request: domain.RequestID{Source: "http", ID: "rej-1"},
		Principal: "org_1", Reject: &domain.RejectRequest{Error: domain.Error{Code: "QWED-SEC-002", Message: "Malicious payload detected", Details: details},
			Endpoint: "/verify/code", BodyBytes: 42}})
	if ev.Type != domain.EvCommandRejected {
		t.Fatalf("recorded %s, want %s", ev.Type, domain.EvCommandRejected)
	}
	g.Submit(t, gatetest.Verify(agent, "v1", "c1", 1, "x"))
	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay --verify of the recorded log: %+v %v", rep, err)
	}
}
