package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain/guard"
)

// Declared outputs (QWED-Agent spec v1.1 §1.3 "pre-execution verification
// of agent outputs", §5.2 no_pii_leakage; docs/ARCHITECTURE.md "Declared
// outputs and the sandbox on Kafka").
//
// An action may declare the output it will produce (Action.Output: a
// message body, a file's content, a reply to a user): Decide scans it as
// it scans an outbound action's parameters, and it is recorded with the
// action, so that the decision re-decides and the attestation's request
// digest binds the output that was approved. An execution log may carry
// the output the action produced: the transport scans it (ScanOutput) and
// the command records the scan (Command.OutputScan: size, SHA-256,
// findings), never the text. Both are gated by Config.OutputScan.

// MaxOutputBytes bounds a declared output (action.output) and an
// execution's output (output of POST /agents/{id}/executions).
const MaxOutputBytes = 64 << 10

// PIIFinding is one kind of PII or secret found and where: "target", a
// JSON pointer under "parameters", or "output", and the byte offset in
// that string. It never holds the value.
type PIIFinding struct {
	Kind     string `json:"kind"`
	Location string `json:"location"`
	Offset   int64  `json:"offset"`
}

// OutputScan is what the transport found in an execution's output before
// Decide: its size in bytes, the hex SHA-256 of its UTF-8 bytes and the
// findings of the PII scan (read whole and strictly, guard.ScanMode: at
// most guard.MaxPIIFindings and one per kind; offsets in the folded text).
// The output itself is never part of a command.
type OutputScan struct {
	Bytes    int64        `json:"bytes"`
	SHA256   string       `json:"sha256"`
	Findings []PIIFinding `json:"findings,omitempty"`
}

// maxScanFindings bounds a recorded scan's findings: guard.ScanMode.All's
// bound (MaxPIIFindings, and the first of each of the eight kinds past it).
const maxScanFindings = guard.MaxPIIFindings + 8

// locOutput is the location of a finding in an output.
const locOutput = "output"

// ScanOutput scans an execution's output: the one function every
// transport calls, so that the same output is the same recorded scan.
func ScanOutput(text string) *OutputScan {
	sum := sha256.Sum256([]byte(text))
	s := &OutputScan{Bytes: int64(len(text)), SHA256: hex.EncodeToString(sum[:])}
	for _, f := range scanOutput(text, guard.ScanMode{Strict: true, All: true, Keys: true}) {
		s.Findings = append(s.Findings, PIIFinding{Kind: f.Kind, Location: locOutput + f.Where, Offset: int64(f.Offset)})
	}
	return s
}

// scanOutput scans an output (declared or executed) as text and, when it
// is a JSON document holding an escape, also as JSON (guard.ScanJSONWith,
// as parameters are read): its reader decodes "\u0034111…" into a card
// number the text scan does not see. A kind found only that way is added
// with its JSON pointer as Where ("" for the text's), under m's bound.
func scanOutput(text string, m guard.ScanMode) []guard.PIIFinding {
	out := guard.ScanWith(text, m)
	if !strings.Contains(text, "\\") || !json.Valid([]byte(text)) {
		return out
	}
	for _, f := range guard.ScanJSONWith([]byte(text), m) {
		if slices.ContainsFunc(out, func(g guard.PIIFinding) bool { return g.Kind == f.Kind }) {
			continue
		}
		if len(out) < guard.MaxPIIFindings || m.All {
			out = append(out, f)
		}
	}
	return out
}

// unknownMember is the refusal a gate without Config.OutputScan gave a
// body carrying the member at path: the transport's strict decoding
// refused it as unknown (QWED-REQ-001). A log written before the switch
// re-decides such a command the same way.
func unknownMember(path string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "unknown member " + path,
		Details: map[string]any{"field": path, "reason": "unknown"}}
}

// piiViolation reports whether findings hold a kind that denies an output
// before it runs (piiBlocking).
func piiViolation(findings []PIIFinding) bool {
	for _, f := range findings {
		if piiBlocking[f.Kind] {
			return true
		}
	}
	return false
}

// executionOutput checks an execution log's output scan (Config.OutputScan)
// and returns the result hash to record: the one reported, else the
// output's. A result hash that is not the output's SHA-256 ("sha256:" and
// 64 hex digits, or the digits alone, any case) is refused: the log would
// attest two different results.
func executionOutput(r *LogExecution, s *OutputScan) (string, *Error) {
	if len(s.SHA256) != 2*sha256.Size || strings.ToLower(s.SHA256) != s.SHA256 || !isHex(s.SHA256) || s.Bytes < 0 ||
		len(s.Findings) > maxScanFindings {
		return "", &Error{Code: CodeInvalidRequest, Message: "output_scan: not a scan of the gate"}
	}
	if r.ResultHash == "" {
		return "sha256:" + s.SHA256, nil
	}
	h := strings.ToLower(r.ResultHash)
	h = strings.TrimPrefix(h, "sha256:")
	if h != s.SHA256 {
		return "", fieldError(CodeInvalidRequest, "result_hash", "is not the SHA-256 of output (send one, or the hash of the output sent)")
	}
	return r.ResultHash, nil
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
