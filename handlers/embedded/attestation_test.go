package embedded_test

import (
	"context"
	"crypto/elliptic"
	"encoding/base64"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/embedded/gatetest"
	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// highSSigner signs as the gate did before signatures were low-S: every
// token it returns carries the high-S encoding of its signature.
type highSSigner struct{ inner domain.Signer }

func forceHighS(t testing.TB, tok string) string {
	i := strings.LastIndexByte(tok, '.')
	sig, err := base64.RawURLEncoding.DecodeString(tok[i+1:])
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature of %s: %v", tok, err)
	}
	n := elliptic.P256().Params().N
	s := new(big.Int).SetBytes(sig[32:])
	if s.Cmp(new(big.Int).Rsh(n, 1)) <= 0 {
		s.Sub(n, s)
	}
	s.FillBytes(sig[32:])
	return tok[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}

var legacyT testing.TB

func (h highSSigner) Sign(c domain.AttestationClaims) (string, error) {
	tok, err := h.inner.Sign(c)
	if err != nil {
		return "", err
	}
	return forceHighS(legacyT, tok), nil
}

func (h highSSigner) SignCheckpoint(c domain.CheckpointClaims) (string, error) {
	tok, err := h.inner.(domain.CheckpointSigner).SignCheckpoint(c)
	if err != nil {
		return "", err
	}
	return forceHighS(legacyT, tok), nil
}

// Issue 11 item 14: a log written before attestations were low-S and had
// an exp (here: every decision and checkpoint token in its high-S
// encoding, and attestations with a 24 h exp) still replays byte for byte
// with the keyring's replay signer, and still passes an audit, months
// after its attestations expired.
func TestReplayAndAuditOfHighSAndExpiringAttestations(t *testing.T) {
	legacyT = t
	dir := t.TempDir()
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	log, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	store, err := projections.Open(filepath.Join(dir, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clock := gatetest.NewClock(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC))
	w, err := handlers.NewWorker(handlers.WorkerConfig{
		Log: log, Store: store, Signer: highSSigner{kr.SignerTTL("node_legacy", 24*time.Hour)},
		Clock: clock.Now, Checkpoint: domain.CheckpointPolicy{Events: 3, Interval: domain.Duration(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	agent, err := w.Submit(ctx, gatetest.Register("r1", 3))
	if err != nil {
		t.Fatal(err)
	}
	attested := 0
	for i := 1; i <= 6; i++ {
		clock.Advance(time.Second)
		cmd := gatetest.Verify(agent.Registered.AgentID, "v"+string(rune('0'+i)), "c1", i, string(rune('0'+i))+"+1")
		cmd.Verify.Options.RequireAttestation = true
		ev, err := w.Submit(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Decided.Attestation != "" {
			attested++
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if attested != 6 {
		t.Fatalf("%d attestations, want 6", attested)
	}
	cks := 0
	for _, ev := range gatetest.LogEvents(t, log) {
		if ev.Checkpoint != nil {
			cks++
		}
	}
	if cks == 0 {
		t.Fatal("no checkpoint was written")
	}
	rep, err := replay.Replay(context.Background(), log, store, true, kr.SignerFor("node_legacy"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Redecided < 7 {
		t.Fatalf("replay of a high-S log: %d re-decided, %s %v", rep.Redecided, rep.ProjectionDiff, rep.Mismatches)
	}
	ar, err := audit.Verify(context.Background(), audit.LogSource(log, 0), kr.JWKS(), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ar.OK() || ar.Partitions[0].Attestations != 6 {
		t.Fatalf("audit of a high-S log with expired attestations: %+v %v", ar.Partitions, ar.Break)
	}
}

// Issue 11 item 14: the embedded gate's attestations carry exp = iat +
// Options.AttestationTTL, are low-S (a relying party's Verify accepts
// them), and replay reproduces them.
func TestGateAttestationsExpire(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC().Truncate(time.Second)
	g, err := embedded.OpenGate(embedded.Options{DataDir: dir, AdminKey: "admin", Clock: func() time.Time { return now }, AttestationTTL: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rg := gatetest.Run(g)
	defer rg.Stop(t)
	agent := rg.Submit(t, gatetest.Register("r1", 3)).Registered.AgentID
	cmd := gatetest.Verify(agent, "v1", "c1", 1, "x")
	cmd.Verify.Options.RequireAttestation = true
	ev := rg.Submit(t, cmd)
	set, err := attest.ParseJWKS(g.Keyring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := set.Verify(ev.Decided.Attestation)
	if err != nil {
		t.Fatalf("a fresh attestation does not verify: %v", err)
	}
	if cl.ExpiresAt == nil || cl.ExpiresAt.Unix() != cl.IssuedAt+7200 {
		t.Fatalf("exp %v iat %d, want iat + 2h", cl.ExpiresAt, cl.IssuedAt)
	}
	rep, err := replay.Replay(context.Background(), g.Log, g.Store, true, g.Keyring.SignerFor(g.NodeID))
	if err != nil || !rep.OK() {
		t.Fatalf("replay: %+v %v", rep, err)
	}
}
