package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/jcs"
)

// Engine verdicts inside verify_action (issue 4, QWED-Agent spec v1.1 §2.2-§2.3).
//
// The verification engine runs before Decide, outside the pure core (the
// worker's Submit, in the caller's goroutine): Decide must not wait on a
// solver, and a replay must reproduce the decision without re-running it.
// The transport attaches the engine's answer to the command as an
// EngineVerdict, and Decide combines it with the trust × risk matrix of
// the QWED-Agent user guide as QWED-Agent spec v1.1 §2.3 says:
//
//	VERIFIED  + low risk        APPROVED
//	VERIFIED  + higher risk     APPROVED with an attestation (when trust allows)
//	FAILED    + any             DENIED, QWED-AGENT-005 with the engine's reason
//	CORRECTED + low risk        CORRECTED: the corrected action is returned,
//	                            both digests are recorded
//	CORRECTED + higher risk     PENDING (principal approval)
//	UNCERTAIN (UNSUPPORTED, ERROR, TIMEOUT) + any   PENDING
//	BLOCKED, or a critical/high finding             DENIED, QWED-SEC-002, a
//	                            security violation (trust -2, QWED-Agent spec v1.1 §8.3)
//
// The trust × risk matrix is applied first and can only make the answer
// stricter: a risk the agent's trust level denies is denied whatever the engine
// says, and PENDING stays PENDING. QWED-Agent spec v1.1 §2.3 knows two risk
// levels; "low" is the QWED-Agent user guide's LOW, and medium, high and
// critical count as "high" (fail closed).
//
// Routing: calculate -> math, verify_logic -> logic, execute_sql -> sql,
// execute_code -> code (and the database_* types -> sql). An engine outside
// a non-empty permissions.allowed_engines is denied with QWED-AGENT-005
// (the rule the gate already applied); an empty allowed_engines allows
// every engine. A command without a verdict (no engine configured, the
// engine not built in, or a command recorded before engines existed) is
// decided by the rules alone, as before.
//
// The sql engine's statement class sets an SQL action's risk (the one rule,
// Config.EngineSQLRisk; docs/ARCHITECTURE.md, "One of each rule"); without
// a class the action is critical. Only on a state whose configuration
// predates that switch (a log written before it) does the tokenizer of
// sqlrisk_legacy.go classify the query instead.

// EngineVerdict is a verification engine's answer on an action's query or
// code, attached to a verify_action command by the transport before Decide
// and recorded with it.
type EngineVerdict struct {
	// Engine is the engine id (math, logic, sql, code).
	Engine string `json:"engine"`
	// EngineVersion is the version of its capabilities document.
	EngineVersion string `json:"engine_version,omitempty"`
	// Status is the engine's status (QWED protocol v1.0 §6.2).
	Status engines.Status `json:"status"`
	// OutcomeDigest is the hex SHA-256 of the RFC 8785 form of the
	// engine's outcome (status, result, corrected, findings, error).
	OutcomeDigest string `json:"outcome_digest"`
	// Corrected is the corrected query or code (Status CORRECTED).
	Corrected string `json:"corrected,omitempty"`
	// Findings are the engine's security findings.
	Findings []engines.Finding `json:"findings,omitempty"`
	// Risk is the risk the engine assigns the action (the sql engine's
	// statement class); "" when the engine does not classify.
	Risk Risk `json:"risk,omitempty"`
	// Reason is the engine's explanation (its result message or error).
	Reason string `json:"reason,omitempty"`
	// Code is the §8 code of the engine's error, if any.
	Code string `json:"code,omitempty"`
	// Parameter is the tool parameter the verdict answers (a tool call's
	// verdict, toolverify.go); "" for an action's.
	Parameter string `json:"parameter,omitempty"`
}

// MaxVerdictFindings bounds the findings recorded with a verdict (the
// transport keeps the most severe first).
const MaxVerdictFindings = 64

// EngineFor returns the QWED engine that verifies an action type ("" when
// the type is not verified by a QWED engine).
func EngineFor(actionType string) string {
	if s, ok := actionSpecs[actionType]; ok && s.QWEDEngine {
		return s.Engine
	}
	return ""
}

// The verdict check reported in checks_passed / checks_failed.
const checkEngineVerdict = "engine_verified"

// severe reports whether a finding's severity makes it a security block.
func severe(f *engines.Finding) bool {
	s := strings.ToLower(f.Severity)
	return s == "critical" || s == "high"
}

// verdictClass is what a verdict contributes to a classification.
type verdictClass int

const (
	verdictNone      verdictClass = iota // no verdict: the rules alone
	verdictVerified                      // the matrix decides
	verdictCorrected                     // CORRECTED (low) or PENDING
	verdictUncertain                     // PENDING
)

// applyVerdict folds the verdict v into cl for an action of spec; it sets
// cl.deny for FAILED and BLOCKED verdicts.
func applyVerdict(cl *classification, spec ActionSpec, act *Action, v *EngineVerdict) {
	if v.Engine != spec.Engine {
		// Not this type's engine: a transport fault; never trust it.
		cl.verdict = verdictUncertain
		cl.verdictWhy = "verdict of engine '" + v.Engine + "' does not answer a " + act.Type + " action"
		return
	}
	rules := make([]string, 0, len(v.Findings))
	blocked := v.Status == engines.Blocked
	for i := range v.Findings {
		if severe(&v.Findings[i]) {
			blocked = true
			rules = append(rules, v.Findings[i].Rule)
		}
	}
	switch {
	case blocked:
		msg := "engine '" + v.Engine + "' blocked the action"
		if v.Reason != "" {
			msg += ": " + v.Reason
		} else if len(v.Findings) > 0 {
			msg += ": " + v.Findings[0].Message
		}
		details := map[string]any{"engine": v.Engine, "status": string(v.Status), "outcome_digest": v.OutcomeDigest}
		if len(rules) > 0 {
			details["rules"] = rules
		}
		cl.deny = &Error{Code: CodeSecurityViolated, Message: msg, Details: details}
		cl.failedCheck, cl.blocked, cl.violation = checkEngineVerdict, true, true
	case v.Status == engines.Failed:
		msg := "verification failed: engine '" + v.Engine + "' refuted the action"
		if v.Reason != "" {
			msg = "verification failed: " + v.Reason
		}
		cl.deny = &Error{Code: CodeVerificationFailed, Message: msg,
			Details: map[string]any{"engine": v.Engine, "status": string(v.Status), "outcome_digest": v.OutcomeDigest}}
		cl.failedCheck = checkEngineVerdict
	case v.Status == engines.Verified:
		cl.verdict = verdictVerified
		cl.pass(checkEngineVerdict)
	case v.Status == engines.Corrected && v.Corrected != "":
		cl.verdict = verdictCorrected
		cl.pass(checkEngineVerdict)
	default:
		// UNSUPPORTED, ERROR, TIMEOUT, a CORRECTED without a correction,
		// or a status the gate does not know: uncertain.
		cl.verdict = verdictUncertain
		cl.verdictWhy = "engine '" + v.Engine + "' answered " + string(v.Status)
		if v.Reason != "" {
			cl.verdictWhy += " (" + v.Reason + ")"
		}
	}
}

// correctedAction returns act with its verified content replaced by the
// engine's correction, and the hex SHA-256 of its RFC 8785 form.
func correctedAction(act *Action, corrected string) (*Action, string, error) {
	c := *act
	if act.Type == "execute_code" {
		c.Code = corrected
		if act.Code == "" {
			c.Query = corrected
		}
	} else {
		c.Query = corrected
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, "", err
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(canon)
	return &c, hex.EncodeToString(sum[:]), nil
}

// verdictRisk returns the risk of an action refined by the engine's
// statement class: execute_sql takes the class; the other SQL types take
// the higher of the type's risk and the class. An unknown class is
// critical (fail closed).
func verdictRisk(spec ActionSpec, v *EngineVerdict) Risk {
	r, err := ParseRisk(string(v.Risk))
	if err != nil {
		r = RiskCritical
	}
	if spec.Risk == RiskCritical && spec.SQL {
		return r
	}
	if r.Rank() > spec.Risk.Rank() {
		return r
	}
	return spec.Risk
}

// MayRunEngine reports whether the transport should run the verification
// engine of cmd's verify_action, given the agent as last committed (nil
// when it is not known): only when the caller authenticates as the agent
// (its token, its principal or the admin, as Decide's authentication
// says), the agent is active, the action type is not blocked for it and
// the engine is allowed. A request Decide will refuse therefore costs no
// engine (or solver) time. The transport records NotRunVerdict instead, so
// that a request that does authenticate by the time it is decided (its
// agent was registered in the meantime) is never approved unverified.
func MayRunEngine(a *Agent, cmd *Command) bool {
	if cmd == nil || cmd.Verify == nil || !authenticatesActive(a, cmd) {
		return false
	}
	act := &cmd.Verify.Action
	if contains(a.Permissions.BlockedTools, act.Type) {
		return false
	}
	id := EngineFor(act.Type)
	return id != "" && (len(a.Permissions.AllowedEngines) == 0 || contains(a.Permissions.AllowedEngines, id))
}

// authenticatesActive reports whether cmd authenticates, as Decide's
// authentication says, as the active agent a (nil: unknown): its token,
// its principal or the admin.
func authenticatesActive(a *Agent, cmd *Command) bool {
	if a == nil || a.ID != cmd.AgentID || a.Status == StatusSuspended {
		return false
	}
	return tokenMatches(cmd.TokenHash, a.TokenHash) ||
		(cmd.Principal != "" && (cmd.Principal == AdminPrincipal || cmd.Principal == a.Info.PrincipalID))
}

// NotRunVerdict is the verdict recorded for an action whose engine the
// transport did not run (MayRunEngine was false): an ERROR with
// QWED-ENG-004, which Decide treats as UNCERTAIN (never APPROVED).
func NotRunVerdict(actionType string) *EngineVerdict {
	id := EngineFor(actionType)
	if id == "" {
		return nil
	}
	v := &EngineVerdict{Engine: id, Status: engines.Error, Code: string(CodeEngineMissing),
		Reason: "engine not run: the request did not authenticate as an active agent allowed to use it when it arrived"}
	v.OutcomeDigest = notRunDigest(v)
	return v
}

// notRunDigest is the outcome digest of a NotRunVerdict: the hex SHA-256
// of the RFC 8785 form of the outcome it stands for, shaped as the
// protocol service digests one (status, verified, engine, error).
func notRunDigest(v *EngineVerdict) string {
	type errBody struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Status   engines.Status `json:"status"`
		Verified bool           `json:"verified"`
		Engine   string         `json:"engine"`
		Error    errBody        `json:"error"`
	}{v.Status, false, v.Engine, errBody{v.Code, v.Reason}})
	canon, err := jcs.Transform(b)
	if err != nil {
		canon = b // cannot happen: every member is a string or a bool
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
