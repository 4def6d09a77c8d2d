package client_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/json"
	"errors"
	"flag"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/handlers/attest"
)

var updateVectors = flag.Bool("update", false, "rewrite testdata/attestation_vectors.json")

// vectorsFile is the one set of attestation vectors every verifier runs:
// this package's, the gate's (handlers/attest), the Python SDK's
// (sdk/python/tests/test_attestation_vectors.py) and the TypeScript SDK's
// (sdk/typescript/test/attestation-vectors.test.mjs).
const vectorsFile = "testdata/attestation_vectors.json"

// attestationVectors is the file's document.
type attestationVectors struct {
	Comment string `json:"comment"`
	// Now is the time (Unix seconds) the verifiers check exp against.
	Now  int64           `json:"now"`
	JWKS json.RawMessage `json:"jwks"`
	// Vectors are signed tokens with the outcome every verifier must give.
	Vectors []attestationVector `json:"vectors"`
}

type attestationVector struct {
	Name  string `json:"name"`
	Token string `json:"token"`
	// Want is "ok" or the failed check, named as the Python SDK's
	// AttestationError.reason ("malformed", "algorithm", "signature",
	// "expired", "issuer", ...).
	Want string `json:"want"`
	// Claims are claims an accepted token must carry, as read.
	Claims map[string]string `json:"claims,omitempty"`
}

const (
	vectorsKID = "vectors-kid"
	vectorsNow = 1764000000 // 2025-11-24T16:00:00Z
)

// vectorsHeader and vectorsClaims are a valid token's header and claims
// (exp 2100-01-01, so the gate's wall-clock check passes too).
const (
	vectorsHeader = `{"alg":"ES256","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`
	vectorsClaims = `"iss":"did:qwed:node:n1","sub":"did:qwed:agent:agent_1","jti":"act_1","iat":1763999990,` +
		`"exp":4102444800,"request_digest":"sha256:00","seq":7,"partition":0,"risk_level":"low"`
)

// buildAttestationVectors signs every vector with the fixed key of
// fixedKey, deterministically (RFC 6979, low S), so the file is
// reproducible.
func buildAttestationVectors(t *testing.T) []byte {
	key := fixedKey(t)
	claims := func(extra string) string { return "{" + vectorsClaims + "," + extra + "}" }
	ok := claims(`"agent_id":"agent_1","decision":"APPROVED"`)
	okClaims := map[string]string{"agent_id": "agent_1", "decision": "APPROVED"}
	sign := func(header, claims string, highS bool) string {
		return signDeterministic(t, key, []byte(header), []byte(claims), highS)
	}
	vs := []attestationVector{
		{"valid", sign(vectorsHeader, ok, false), "ok", okClaims},
		// Repeated header members: the last one won in every verifier, so
		// "none" then "ES256" passed everywhere.
		{"header alg repeated, ES256 last", sign(`{"alg":"none","alg":"ES256","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "malformed", nil},
		{"header alg repeated, none last", sign(`{"alg":"ES256","alg":"none","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "malformed", nil},
		{"header alg repeated through an escape", sign(`{"alg":"ES256","\u0061lg":"ES256","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "malformed", nil},
		{"header alg in another case", sign(`{"alg":"ES256","ALG":"none","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "malformed", nil},
		{"header kid repeated", sign(`{"alg":"ES256","kid":"other","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "malformed", nil},
		// Repeated claims: Go read the last, a reader of the first another
		// agent or decision.
		{"agent_id repeated with another value", sign(vectorsHeader, claims(`"agent_id":"agent_2","agent_id":"agent_1","decision":"APPROVED"`), false), "malformed", nil},
		{"decision repeated with another value", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"DENIED","decision":"APPROVED"`), false), "malformed", nil},
		{"decision repeated with the same value", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","decision":"APPROVED"`), false), "malformed", nil},
		// Case variants: Go's decoder matched AGENT_ID to agent_id (the
		// last won), Python and TypeScript read the exact name.
		{"agent_id in another case", sign(vectorsHeader, claims(`"agent_id":"agent_1","AGENT_ID":"agent_2","decision":"APPROVED"`), false), "malformed", nil},
		{"decision in another case", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","Decision":"DENIED"`), false), "malformed", nil},
		// Unicode simple folding: the Kelvin sign folds with k, long s with s.
		{"risk_level with a Kelvin sign", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","ris\u212a_level":"high"`), false), "malformed", nil},
		{"iss with a long s", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","i\u017fs":"did:web:evil"`), false), "malformed", nil},
		{"final and non-final sigma", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","x\u03c3":1,"x\u03c2":2`), false), "malformed", nil},
		{"two lone surrogates (both decode to U+FFFD)", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","\ud800":1,"\udc00":2`), false), "malformed", nil},
		{"member repeated in a nested object", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","ext":{"a":1,"b":{"c":1,"C":2}}`), false), "malformed", nil},
		// Names that do not fold together are distinct: accepted.
		{"names differing by more than case", sign(vectorsHeader, claims(`"agent_id":"agent_1","agent-id":"agent_2","decision":"APPROVED"`), false), "ok", okClaims},
		{"sharp s and ss (full folding only)", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","\u00df":1,"ss":2`), false), "ok", okClaims},
		{"dotless i and I", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","\u0131":1,"I":2`), false), "ok", okClaims},
		{"same name in sibling objects", sign(vectorsHeader, claims(`"agent_id":"agent_1","decision":"APPROVED","ext":[{"a":1},{"a":2}]`), false), "ok", okClaims},
		// The other checks, for the same file to hold them.
		{"alg none", sign(`{"alg":"none","kid":"vectors-kid","typ":"qwed-attestation+jwt"}`, ok, false), "algorithm", nil},
		{"high-S twin", sign(vectorsHeader, ok, true), "signature", nil},
		{"expired", sign(vectorsHeader, `{"iss":"did:qwed:node:n1","jti":"act_1","iat":1700000000,"exp":1700000600,"request_digest":"sha256:00","seq":7,"partition":0,"agent_id":"agent_1","decision":"APPROVED"}`, false), "expired", nil},
		{"foreign issuer", sign(vectorsHeader, `{"iss":"did:web:evil","jti":"act_1","iat":1763999990,"request_digest":"sha256:00","seq":7,"partition":0,"agent_id":"agent_1","decision":"APPROVED"}`, false), "issuer", nil},
	}
	doc := attestationVectors{
		Comment: "Signed attestations and the outcome every verifier must give (Go client, handlers/attest, " +
			"Python and TypeScript SDKs). Generated by client/attestvectors_test.go: go test ./client -run TestAttestationVectors -update",
		Now:     vectorsNow,
		JWKS:    jwksOf(t, &key.PublicKey, vectorsKID),
		Vectors: vs,
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// signDeterministic signs header.claims (base64url) with key by RFC 6979,
// the signature normalised to low S, or to its high-S twin when highS.
func signDeterministic(t *testing.T, key *ecdsa.PrivateKey, header, claims []byte, highS bool) string {
	t.Helper()
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(claims)
	digest := sha256.Sum256([]byte(input))
	der, err := key.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &rs); err != nil {
		t.Fatal(err)
	}
	n := elliptic.P256().Params().N
	if (rs.S.Cmp(new(big.Int).Rsh(n, 1)) > 0) != highS {
		rs.S.Sub(n, rs.S)
	}
	sig := make([]byte, 64)
	rs.R.FillBytes(sig[:32])
	rs.S.FillBytes(sig[32:])
	return input + "." + b64.EncodeToString(sig)
}

// gateErrors and clientErrors are the sentinels of each reason.
var (
	gateErrors = map[string]error{
		"malformed": attest.ErrMalformed, "algorithm": attest.ErrAlgorithm, "type": attest.ErrType,
		"unknown_key": attest.ErrUnknownKey, "signature": attest.ErrSignature, "expired": attest.ErrExpired,
		"issuer": attest.ErrIssuer,
	}
	clientErrors = map[string]error{
		"malformed": client.ErrAttestationMalformed, "algorithm": client.ErrAttestationAlgorithm,
		"type": client.ErrAttestationType, "unknown_key": client.ErrAttestationKey,
		"signature": client.ErrAttestationSignature, "expired": client.ErrAttestationExpired,
		"issuer": client.ErrAttestationIssuer,
	}
)

// TestAttestationVectors runs the shared vectors through the client's
// verifier and the gate's (handlers/attest): each gives the vector's
// outcome. The file is what this test generates (-update rewrites it), so
// the Python and TypeScript suites, which run the same file, check the
// same tokens.
func TestAttestationVectors(t *testing.T) {
	want := buildAttestationVectors(t)
	if *updateVectors {
		if err := os.WriteFile(vectorsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: go test ./client -run TestAttestationVectors -update", vectorsFile)
	}
	var doc attestationVectors
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(doc.Now, 0)
	for _, v := range doc.Vectors {
		claims, err := client.VerifyAttestation(v.Token, doc.JWKS, now)
		gateClaims, gateErr := attest.Verify(v.Token, doc.JWKS)
		if v.Want == "ok" {
			if err != nil || gateErr != nil {
				t.Errorf("%s: refused: client %v, gate %v", v.Name, err, gateErr)
				continue
			}
			read := map[string]string{
				"agent_id": claims.AgentID, "decision": string(claims.Decision),
			}
			gateRead := map[string]string{
				"agent_id": gateClaims.AgentID, "decision": string(gateClaims.Decision),
			}
			for k, want := range v.Claims {
				if read[k] != want || gateRead[k] != want {
					t.Errorf("%s: claim %s: client %q, gate %q, want %q", v.Name, k, read[k], gateRead[k], want)
				}
			}
			continue
		}
		if !errors.Is(err, clientErrors[v.Want]) {
			t.Errorf("%s: client: %v, want %v", v.Name, err, clientErrors[v.Want])
		}
		if !errors.Is(gateErr, gateErrors[v.Want]) {
			t.Errorf("%s: gate: %v, want %v", v.Name, gateErr, gateErrors[v.Want])
		}
	}
}
