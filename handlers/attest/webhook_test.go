package attest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

// verifyByHand checks a detached webhook signature over payload with the
// JWKS jwks the way a receiver without this package would: decode the
// header, find the key by kid, rebuild the signing input of RFC 7515
// Appendix F and check the r||s signature with crypto/ecdsa.
func verifyByHand(t *testing.T, jwks []byte, sig string, payload []byte) bool {
	t.Helper()
	parts := strings.Split(sig, ".")
	if len(parts) != 3 || parts[1] != "" {
		t.Fatalf("signature %q is not a detached compact JWS", sig)
	}
	raw, err := b64.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	if h["alg"] != "ES256" || h["typ"] != WebhookTyp {
		t.Fatalf("header %v", h)
	}
	var doc struct {
		Keys []struct{ Kid, X, Y string }
	}
	if err := json.Unmarshal(jwks, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range doc.Keys {
		if k.Kid != h["kid"] {
			continue
		}
		x, _ := b64.DecodeString(k.X)
		y, _ := b64.DecodeString(k.Y)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := b64.DecodeString(parts[2])
		if err != nil || len(rs) != 64 {
			t.Fatalf("signature segment: %v (%d bytes)", err, len(rs))
		}
		digest := sha256.Sum256([]byte(parts[0] + "." + b64.EncodeToString(payload)))
		return ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(rs[:32]), new(big.Int).SetBytes(rs[32:]))
	}
	t.Fatalf("kid %q not in the JWKS", h["kid"])
	return false
}

func TestSignWebhook_DetachedAndVerifiable(t *testing.T) {
	ring := fixedRing(t)
	payload := []byte(`{"delivery_id":"dl_1","kind":"blocked"}`)
	sig, err := ring.SignWebhook(payload)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ring.SignWebhook(payload)
	if err != nil || again != sig {
		t.Fatalf("not deterministic: %q vs %q (%v)", sig, again, err)
	}
	if !verifyByHand(t, ring.JWKS(), sig, payload) {
		t.Fatal("a receiver's own ES256 check refuses the signature")
	}
	set, err := ParseJWKS(ring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	if err := set.VerifyWebhook(sig, payload); err != nil {
		t.Fatalf("VerifyWebhook: %v", err)
	}
	// Another body, a byte changed.
	if err := set.VerifyWebhook(sig, []byte(`{"delivery_id":"dl_2","kind":"blocked"}`)); !errors.Is(err, ErrSignature) {
		t.Fatalf("tampered body: %v, want ErrSignature", err)
	}
	if verifyByHand(t, ring.JWKS(), sig, []byte(`{"delivery_id":"dl_2","kind":"blocked"}`)) {
		t.Fatal("a receiver's own check accepts a tampered body")
	}
	// The high-S twin of the signature is refused.
	if err := set.VerifyWebhook(twin(sig), payload); !errors.Is(err, ErrSignature) {
		t.Fatalf("high-S twin: %v, want ErrSignature", err)
	}
}

func TestVerifyWebhook_Refusals(t *testing.T) {
	ring := fixedRing(t)
	set, err := ParseJWKS(ring.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{}`)
	sig, err := ring.SignWebhook(payload)
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := strings.Cut(sig, ".")
	// An attestation's header on the same key: wrong typ.
	att, err := ring.Signer("node").Sign(typicalClaims())
	if err != nil {
		t.Fatal(err)
	}
	attH, _, _ := strings.Cut(att, ".")
	enc := func(v string) string { return b64.EncodeToString([]byte(v)) }
	for name, c := range map[string]struct {
		sig  string
		want error
	}{
		"attached payload":      {h + "." + b64.EncodeToString(payload) + "." + strings.Split(sig, ".")[2], ErrMalformed},
		"attestation as a sig":  {att, ErrMalformed},
		"attestation's header":  {attH + ".." + strings.Split(sig, ".")[2], ErrType},
		"alg none":              {enc(`{"alg":"none","typ":"qwed-webhook+jws","kid":"x"}`) + "..", ErrAlgorithm},
		"unknown kid":           {enc(`{"alg":"ES256","typ":"qwed-webhook+jws","kid":"nope"}`) + ".." + strings.Split(sig, ".")[2], ErrUnknownKey},
		"crit":                  {enc(`{"alg":"ES256","typ":"qwed-webhook+jws","kid":"x","crit":["b64"]}`) + "..", ErrMalformed},
		"two segments":          {"a.b", ErrMalformed},
		"bad signature base64":  {h + "..!!", ErrMalformed},
		"truncated signature":   {h + ".." + strings.Split(sig, ".")[2][:20], ErrSignature},
		"over the token bound":  {h + ".." + strings.Repeat("A", MaxTokenBytes), ErrMalformed},
		"header not base64 url": {"%%.." + strings.Split(sig, ".")[2], ErrMalformed},
	} {
		if err := set.VerifyWebhook(c.sig, payload); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if err := set.VerifyWebhook(sig, make([]byte, MaxWebhookPayloadBytes+1)); !errors.Is(err, ErrMalformed) {
		t.Errorf("payload over the bound: %v", err)
	}
	if _, err := ring.SignWebhook(make([]byte, MaxWebhookPayloadBytes+1)); err == nil {
		t.Error("SignWebhook signed a payload over the bound")
	}
}

func FuzzVerifyWebhook(f *testing.F) {
	ring := fixedRing(f)
	set, err := ParseJWKS(ring.JWKS())
	if err != nil {
		f.Fatal(err)
	}
	sig, err := ring.SignWebhook([]byte(`{"a":1}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sig, []byte(`{"a":1}`))
	f.Add("..", []byte{})
	f.Fuzz(func(t *testing.T, s string, payload []byte) {
		err := set.VerifyWebhook(s, payload)
		if err == nil && (s != sig || string(payload) != `{"a":1}`) {
			// Only the signed pair verifies (the key is fixed).
			if ok := verifyByHand(t, ring.JWKS(), s, payload); !ok {
				t.Fatalf("VerifyWebhook accepted %q over %q", s, payload)
			}
		}
	})
}
