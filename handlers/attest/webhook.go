package attest

import (
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"strings"
)

// Webhook signatures (issue 14): the body of a webhook delivery is signed
// with the keyring's active key as a compact JWS with a detached payload
// (RFC 7515 Appendix F): "<header>..<signature>", where the signing input
// is the header segment, a dot and the base64url of the body as sent. A
// receiver verifies it with the gate's /.well-known/jwks.json, as it
// verifies an attestation: the body it received is the payload.

// WebhookTyp is the JOSE "typ" header of a webhook signature (RFC 8725
// §3.11 explicit typing): no attestation, checkpoint or verdict verifies
// as one, nor the reverse.
const WebhookTyp = "qwed-webhook+jws"

// MaxWebhookPayloadBytes bounds the payload SignWebhook signs and
// VerifyWebhook checks.
const MaxWebhookPayloadBytes = 1 << 20

// webhookHeader is the protected header of a webhook signature, encoded
// from a struct so that equal keys give equal bytes.
type webhookHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

// SignWebhook signs payload with the ring's active key: a compact JWS
// with the payload detached (RFC 7515 Appendix F), header {"alg":"ES256",
// "kid":<RFC 7638 thumbprint>,"typ":WebhookTyp}, deterministic (RFC 6979)
// and low-S like every token of the package. It fails on a payload over
// MaxWebhookPayloadBytes.
func (kr *Keyring) SignWebhook(payload []byte) (string, error) {
	if len(payload) > MaxWebhookPayloadBytes {
		return "", fmt.Errorf("signing webhook: payload of %d bytes exceeds %d", len(payload), MaxWebhookPayloadBytes)
	}
	k := kr.key("")
	hdr, err := json.Marshal(webhookHeader{Alg: "ES256", Kid: k.kid, Typ: WebhookTyp})
	if err != nil {
		return "", fmt.Errorf("signing webhook: %w", err)
	}
	h := b64.EncodeToString(hdr)
	sig, err := signingMethod.Sign(h+"."+b64.EncodeToString(payload), k.priv)
	if err != nil {
		return "", fmt.Errorf("signing webhook: %w", err)
	}
	return h + ".." + b64.EncodeToString(sig), nil
}

// VerifyWebhook checks a webhook signature (SignWebhook's form) over
// payload, the body as received: at most MaxTokenBytes, a detached compact
// JWS (an empty middle segment), the header's alg ES256, typ WebhookTyp, no
// crit, a kid of the set, and a valid low-S signature. Failures wrap the
// package's sentinel errors.
func (s *KeySet) VerifyWebhook(signature string, payload []byte) error {
	if len(payload) > MaxWebhookPayloadBytes {
		return fmt.Errorf("%w: payload of %d bytes exceeds %d", ErrMalformed, len(payload), MaxWebhookPayloadBytes)
	}
	parts := strings.Split(signature, ".")
	if len(parts) != 3 || parts[1] != "" {
		return fmt.Errorf("%w: not a compact JWS with a detached payload", ErrMalformed)
	}
	pub, err := s.keyFor(signature, WebhookTyp)
	if err != nil {
		return err
	}
	return verifyDetached(pub, parts[0], parts[2], payload)
}

// verifyDetached checks the r||s signature sig (base64url) of the header
// segment h and payload.
func verifyDetached(pub *ecdsa.PublicKey, h, sig string, payload []byte) error {
	raw, err := b64.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: decoding signature: %w", ErrMalformed, err)
	}
	if highS(raw) {
		return fmt.Errorf("%w: high-S signature (only s <= n/2 is accepted)", ErrSignature)
	}
	if err := signingMethod.Verify(h+"."+b64.EncodeToString(payload), raw, pub); err != nil {
		return fmt.Errorf("%w: %w", ErrSignature, err)
	}
	return nil
}
