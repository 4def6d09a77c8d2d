package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/attest"
)

// maxPayloadFileBytes bounds the --payload file verify-attestation reads:
// far above any payload a gate accepts (max_payload_size_bytes, 1 MiB by
// default), so only a file that cannot be a message's payload is refused.
const maxPayloadFileBytes = 64 << 20

// verifyA2AAttestation checks an A2A verdict's attestation token against
// the JWKS document jwks as of now and, when payloadFile is set, that the
// token's sub is the digest of that payload (QWED A2A "Tamper
// detection"). It prints VALID and the claims, or INVALID and the reason
// (exit status 1).
func verifyA2AAttestation(token string, jwks []byte, payloadFile string, now time.Time) error {
	set, err := attest.ParseJWKS(jwks)
	if err != nil {
		return err
	}
	claims, err := set.VerifyA2A(token, now)
	if err != nil {
		fmt.Println("INVALID:", err)
		return exitCode(1)
	}
	var matched string
	if payloadFile != "" {
		digest, err := payloadFileDigest(payloadFile)
		if err != nil {
			return err
		}
		if digest != claims.Subject {
			fmt.Printf("INVALID: the payload's digest %s is not the attestation's sub %s\n", digest, claims.Subject)
			return exitCode(1)
		}
		matched = digest
	}
	fmt.Println("VALID")
	if matched != "" {
		fmt.Println("payload matches sub", matched)
	}
	return printJSON(claims)
}

// payloadFileDigest returns the digest of the payload in file as the gate
// computes it (a2a.PayloadDigest: "sha256:" + the hex SHA-256 of its RFC
// 8785 form), the sub of an A2A attestation of that payload.
func payloadFileDigest(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("reading --payload: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxPayloadFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading --payload: %w", err)
	}
	if len(raw) > maxPayloadFileBytes {
		return "", fmt.Errorf("reading --payload: %s exceeds %d bytes", file, maxPayloadFileBytes)
	}
	digest, err := a2a.PayloadDigest(raw)
	if err != nil {
		return "", fmt.Errorf("digesting --payload %s: %w", file, err)
	}
	return digest, nil
}
