package domain

import (
	"strconv"

	"github.com/agentgate/agentgate/domain/engines"
)

// POST /verify in the log (QWED protocol v1.0 §10.4 audit logging; issue 4).
//
// The QWED protocol service runs the engines on a /verify call (single or
// batch) outside the pure core, then submits one qwed.verify command that
// records, per item, the digest of the request item and the digest of the
// engine's outcome. Decide checks the record, mints the verification ID
// and signs the attestations the items asked for: each binds the request
// digest to the outcome digest, the engine and the status, and to the log
// position (seq, partition) of the record. Latency is never recorded or
// signed. Re-deciding the command reproduces every attestation.

// Named limits of qwed.verify.
const (
	// MaxQWEDItems bounds the items of one record (the batch limit of the
	// batch request schema).
	MaxQWEDItems = 100
	// maxQWEDField bounds the engine id, type, version and code fields.
	maxQWEDField = 64
)

// QWEDVerify is the record of one POST /verify call.
type QWEDVerify struct {
	// Batch is true for a §5.3 batch request.
	Batch bool `json:"batch,omitempty"`
	// Items are the verified items, in request order (one for a single
	// request).
	Items []QWEDItem `json:"items"`
}

// QWEDItem is one verified request item.
type QWEDItem struct {
	// RequestDigest is the hex SHA-256 of the RFC 8785 form of the item
	// request (§5.1; for a batch item, the item after the batch options
	// were applied).
	RequestDigest string `json:"request_digest"`
	// Type is the requested type; Engine the engine that answered ("" when
	// none did: an unsupported type, an engine not available).
	Type          string `json:"type"`
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// Status is the §6.2 status answered, or "SKIPPED" for a batch item a
	// fail_fast batch did not run.
	Status string `json:"status"`
	// OutcomeDigest is the hex SHA-256 of the RFC 8785 form of the answered
	// outcome (status, verified, engine, result, proof, error).
	OutcomeDigest string `json:"outcome_digest"`
	// Code is the §8 code of the item's error, if any.
	Code string `json:"code,omitempty"`
	// Attest asks for an attestation (options.include_attestation).
	Attest bool `json:"attest,omitempty"`
}

// StatusSkipped is the status of a batch item a fail_fast batch did not run.
const StatusSkipped = "SKIPPED"

// EvQWEDVerified records a POST /verify call.
const EvQWEDVerified EventType = "qwed.verified"

// QWEDVerified is the payload of EvQWEDVerified.
type QWEDVerified struct {
	// VerificationID is derived from the request: "ver_" + 20 hex digits.
	VerificationID string `json:"verification_id"`
	// Attestations holds, per item, the ES256 JWT of the items that asked
	// for one ("" for the others).
	Attestations []string `json:"attestations"`
}

// QWEDVerifiedReply is the reply to a qwed.verify record (the protocol
// service renders the §6 response from it and the engines' outcomes).
type QWEDVerifiedReply struct {
	VerificationID string   `json:"verification_id"`
	Seq            uint64   `json:"seq"`
	Attestations   []string `json:"attestations"`
}

const idKindVerification = 3

// VerificationIDFor returns the ID a qwed.verify request mints: "ver_" +
// the first 20 hex digits of SHA-256(0x03 source NUL id).
func VerificationIDFor(r RequestID) string {
	return derivedID("ver_", idKindVerification, actionIDHexLen, r)
}

// QWEDSubject is the attestation subject of a /verify answer: the DID of
// the principal whose API key asked.
func QWEDSubject(principal string) string { return "did:qwed:principal:" + principal }

var qwedStatuses = map[string]bool{
	string(engines.Verified): true, string(engines.Failed): true, string(engines.Corrected): true,
	string(engines.Blocked): true, string(engines.Error): true, string(engines.Timeout): true,
	string(engines.Unsupported): true, StatusSkipped: true,
}

// validateQWED checks a record; the error names the first bad field.
func validateQWED(q *QWEDVerify) *Error {
	if len(q.Items) == 0 {
		return missing("qwed_verify.items")
	}
	if len(q.Items) > MaxQWEDItems {
		return fieldError(CodeInvalidRequest, "qwed_verify.items", "more than %d items", MaxQWEDItems)
	}
	for i := range q.Items {
		it := &q.Items[i]
		f := "qwed_verify.items[" + strconv.Itoa(i) + "]"
		switch {
		case !isSHA256Hex(it.RequestDigest):
			return fieldError(CodeInvalidRequest, f+".request_digest", "must be 64 lowercase hex digits (SHA-256)")
		case !isSHA256Hex(it.OutcomeDigest):
			return fieldError(CodeInvalidRequest, f+".outcome_digest", "must be 64 lowercase hex digits (SHA-256)")
		case !qwedStatuses[it.Status]:
			return fieldError(CodeInvalidRequest, f+".status", "'%s' is not a status of seed 002 §6.2", it.Status)
		case len(it.Type) > maxQWEDField || len(it.Engine) > maxQWEDField || len(it.EngineVersion) > maxQWEDField || len(it.Code) > maxQWEDField:
			return fieldError(CodeInvalidRequest, f, "type, engine, engine_version and code are at most %d bytes", maxQWEDField)
		case it.Attest && it.Status == StatusSkipped:
			return fieldError(CodeInvalidRequest, f+".attest", "a skipped item has no outcome to attest")
		}
	}
	return nil
}

// qwedVerify decides a qwed.verify record: an API key holder's call,
// checked and attested.
func (d *decider) qwedVerify() *Event {
	q := d.cmd.QWEDVerify
	if q == nil {
		return d.reject(missing("qwed_verify"))
	}
	if d.cmd.Principal == "" {
		return d.reject(Errorf(CodeMissingAPIKey, "POST /verify needs a principal API key"))
	}
	if err := d.requestIDPresent(); err != nil {
		return d.reject(err)
	}
	if err := validateQWED(q); err != nil {
		return d.reject(err)
	}
	rec := &QWEDVerified{VerificationID: VerificationIDFor(d.cmd.Request), Attestations: make([]string, len(q.Items))}
	for i := range q.Items {
		it := &q.Items[i]
		if !it.Attest {
			continue
		}
		if d.env.Signer == nil {
			return d.reject(Errorf(CodeInternal, "attestation could not be issued: no signing key"))
		}
		c := AttestationClaims{
			Subject: QWEDSubject(d.cmd.Principal), ActionID: rec.VerificationID + "." + strconv.Itoa(i),
			IssuedAt: d.now, RequestDigest: it.RequestDigest, Seq: d.env.Seq, Partition: d.env.Partition,
			Kind: string(CmdQWEDVerify), Engine: it.Engine, Status: it.Status, OutcomeDigest: it.OutcomeDigest,
		}
		tok, err := d.env.Signer.Sign(c)
		if err != nil || tok == "" {
			return d.reject(Errorf(CodeInternal, "attestation could not be issued"))
		}
		rec.Attestations[i] = tok
	}
	d.ev.Type = EvQWEDVerified
	d.ev.QWEDVerified = rec
	return d.ev
}
