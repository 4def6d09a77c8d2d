package attest

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// Issue 11: a tree head round-trips, deterministically; it passes for no
// attestation or checkpoint, nor they for it; an edited claim fails.
func TestTreeHeadTypeAndRoundTrip(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	c := TreeHeadClaims{IssuedAt: 1793693280, Partition: 2, Size: 15, Root: "aa", Head: "bb", Time: "2026-11-03T08:08:00Z",
		AgentID: "agent_x", AgentEvents: 4, AgentDigest: "cc", PeriodFrom: "2026-11-01T00:00:00Z", PeriodTo: "2026-11-04T00:00:00Z"}
	tok, err := kr.SignTreeHead("node_a", c)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := kr.SignTreeHead("node_a", c)
	if again != tok {
		t.Fatal("two signatures of the same tree head differ")
	}
	got, err := set.VerifyTreeHead(tok)
	c.Issuer = IssuerPrefix + "node_a"
	if err != nil || *got != c {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	if _, err := set.Verify(tok); err == nil {
		t.Fatalf("a tree head verified as an attestation: %v", err)
	}
	if _, err := set.VerifyCheckpoint(tok); err == nil {
		t.Fatalf("a tree head verified as a checkpoint: %v", err)
	}
	att, err := kr.Signer("node_a").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.VerifyTreeHead(att); err == nil {
		t.Fatal("an attestation verified as a tree head")
	}
	ck, err := kr.Signer("node_a").(domain.CheckpointSigner).SignCheckpoint(domain.CheckpointClaims{Seq: 1, Head: "bb", IssuedAt: time.Unix(1793693280, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.VerifyTreeHead(ck); err == nil {
		t.Fatal("a checkpoint verified as a tree head")
	}
	if _, err := kr.SignTreeHead("", c); err == nil {
		t.Fatal("a tree head signed without a node ID")
	}
}
