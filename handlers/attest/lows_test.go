package attest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// sigOf returns the r||s signature of a compact JWS.
func sigOf(t *testing.T, token string) []byte {
	t.Helper()
	sig, err := b64.DecodeString(token[strings.LastIndexByte(token, '.')+1:])
	if err != nil || len(sig) != 2*coordBytes {
		t.Fatalf("signature of %s: %v (%d bytes)", token, err, len(sig))
	}
	return sig
}

// Issue 11 item 14: every signature the gate issues is low-S, and a
// relying party's Verify refuses a token's high-S twin (the same claims,
// signed by the same key, re-encoded), while an audit of the log
// (VerifyRecord) still accepts it, as it must for tokens recorded before
// signatures were low-S. With raw RFC 6979 signatures about half of these
// claims would be high-S.
func TestSignaturesAreLowSAndHighSIsRefused(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	signer := kr.Signer("node-1").(*signer)
	for i := range 64 {
		c := typicalClaims()
		c.ActionID = fmt.Sprintf("act_%04d", i)
		tok, err := signer.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		if highS(sigOf(t, tok)) {
			t.Fatalf("claims %d: issued a high-S signature", i)
		}
		if _, err := set.Verify(tok); err != nil && !errors.Is(err, ErrExpired) {
			t.Fatalf("claims %d: low-S token refused: %v", i, err)
		}
		high := twin(tok)
		if !highS(sigOf(t, high)) {
			t.Fatalf("claims %d: the twin of a low-S signature is not high-S", i)
		}
		if _, err := set.Verify(high); !errors.Is(err, ErrSignature) {
			t.Fatalf("claims %d: high-S twin: Verify = %v, want ErrSignature", i, err)
		}
		cl, err := set.VerifyRecord(high)
		if err != nil || cl.ID != c.ActionID {
			t.Fatalf("claims %d: high-S twin as a log record: %+v %v", i, cl, err)
		}
	}
}

// Issue 11 item 14: an attestation carries exp = iat + the signer's TTL.
// Verify refuses it once exp has passed; VerifyRecord (an audit of the
// log, long after) accepts it.
func TestAttestationExpiry(t *testing.T) {
	kr := fixedRing(t)
	set, err := ParseJWKS(kr.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	c := typicalClaims() // issued in 2025: a 24 h exp has passed
	tok, err := kr.SignerTTL("node-1", DefaultAttestationTTL).Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := set.VerifyRecord(tok)
	if err != nil {
		t.Fatal(err)
	}
	if cl.ExpiresAt == nil || cl.ExpiresAt.Unix() != c.IssuedAt.Add(24*time.Hour).Unix() {
		t.Fatalf("exp %v, want iat + 24h", cl.ExpiresAt)
	}
	if _, err := set.Verify(tok); !errors.Is(err, ErrExpired) {
		t.Fatalf("Verify of an expired attestation = %v, want ErrExpired", err)
	}
	c.IssuedAt = time.Now().Truncate(time.Second)
	fresh, err := kr.SignerTTL("node-1", DefaultAttestationTTL).Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Verify(fresh); err != nil {
		t.Fatalf("Verify of a fresh attestation: %v", err)
	}
	none, err := kr.SignerTTL("node-1", 0).Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if cl, err := set.Verify(none); err != nil || cl.ExpiresAt != nil {
		t.Fatalf("TTL 0: exp %v err %v, want no exp", cl.ExpiresAt, err)
	}
}

// Replay reproduces a recorded token exactly, whatever the serving
// signer's settings: the TTL the token carries, and a high-S encoding
// recorded before signatures were low-S. A checkpoint's high-S encoding
// is reproduced the same way.
func TestSignerForReproducesRecordedTTLAndEncoding(t *testing.T) {
	kr := fixedRing(t)
	c := typicalClaims()
	withExp, err := kr.SignerTTL("node-1", 90*time.Minute).Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, recorded := range []string{withExp, twin(withExp)} {
		again, err := kr.SignerFor("node-1")(recorded).Sign(c)
		if err != nil || again != recorded {
			t.Fatalf("re-signed\n%s\nrecorded\n%s (%v)", again, recorded, err)
		}
	}
	plain, err := kr.Signer("node-1").Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := kr.SignerFor("node-1")(twin(plain)).Sign(c); again != twin(plain) {
		t.Fatal("a recorded high-S token without exp is not reproduced")
	}
	// A signer with no recorded token issues the low-S, exp-less form: a
	// replay of a forged high-S token does not reproduce it unless it is
	// the very twin of the valid signature.
	if again, _ := kr.SignerFor("node-1")("").Sign(c); again != plain {
		t.Fatal("no recorded token: not the plain low-S token")
	}
	if again, _ := kr.SignerFor("node-1")(withExp).Sign(c); again == plain {
		t.Fatal("the recorded TTL was not taken")
	}
}
