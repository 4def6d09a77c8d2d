package domain

import (
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// The rules of agent-to-agent interception, in QWED A2A's order:
//
//	0. schema      a2a.Validate: a malformed message is refused
//	               (command.rejected, QWED-REQ-*), nothing forwarded
//	1. credentials a principal API key checks the message against its
//	               boundary, the admin key against the gate-wide one; an
//	               agent token only for messages that agent sends
//	2. trust       sender blocked, receiver blocked, pair blocked, (strict
//	               mode) sender or receiver not allowlisted → blocked;
//	               the pair's token bucket empty → rate_limited
//	3. bypass      a sender of bypass_agents is forwarded unverified
//	4. engine      the payload type's guard (or passthrough)
//	5. sign        every verdict carries an ES256 attestation, or is an
//	               error (fail closed)
//
// A verdict of any status is an a2a.verdict event; blocked, rate_limited
// and error also set Event.Error.

// a2aBlock co-allocates an A2A message's event and its verdict (one
// allocation instead of two on the hot path, like decisionBlock).
type a2aBlock struct {
	ev Event
	v  A2AVerdict
	dt A2ADetails
}

const idKindA2ATrace = 4

// a2aTraceHexLen is the length, in hex digits, of a derived trace id.
const a2aTraceHexLen = 24

// A2ATraceIDFor returns the trace id of a message that names none: "a2a_" +
// the first 24 hex digits of its request's digest (SHA-256(0x04 source
// NUL id) for an unscoped request; requestDigest).
func A2ATraceIDFor(r RequestID) string {
	return derivedID("a2a_", idKindA2ATrace, a2aTraceHexLen, r)
}

// a2aMessage decides a qwed.a2a.message command.
func (d *decider) a2aMessage() *Event {
	m := d.cmd.A2A
	if m == nil {
		return d.reject(missing("a2a"))
	}
	cfg := d.s.Config.A2ASettings()
	digest, p := d.cmd.A2ADigest, (*a2a.Problem)(nil)
	switch {
	case digest == "":
		digest, p = a2a.ValidateDigest(m, int(cfg.MaxPayloadSizeBytes))
	case !a2a.IsDigest(digest):
		return d.reject(fieldError(CodeInternal, "a2a_digest", "the command's payload digest is not sha256: and 64 lowercase hex digits"))
	default:
		p = a2a.ValidateDigested(m, int(cfg.MaxPayloadSizeBytes))
	}
	if p != nil {
		return d.reject(problemError(p))
	}
	boundary, err := d.a2aCredentials(m)
	if err != nil {
		return d.reject(err)
	}
	if d.cmd.Request.ID == "" && m.TraceID == "" {
		return d.reject(missing("request.id"))
	}
	v := &d.a2a.v
	v.Boundary, v.Sender, v.Receiver, v.PayloadType = boundary, m.SenderAgentID, m.ReceiverAgentID, m.PayloadType
	v.TraceID = m.TraceID
	if v.TraceID == "" {
		v.TraceID = A2ATraceIDFor(d.cmd.Request)
	}
	v.PayloadDigest = digest
	d.ev.Type = EvA2AVerdict
	d.ev.A2AVerdict = v
	if !d.a2aTrust(cfg, v) {
		return d.a2aSign()
	}
	if has(cfg.BypassAgents, v.Sender) {
		v.Status, v.Engine, v.Reason = a2a.StatusForwarded, a2a.EngineBypass, "sender is a trusted agent: verification bypassed"
		return d.a2aSign()
	}
	if p := d.a2aRoute(cfg, m, v); p != nil {
		// The guard could not read the payload: an input problem,
		// refused like a malformed message (never forwarded, not even
		// in shadow mode).
		d.ev.A2AVerdict, d.ev.Error = nil, nil
		return d.reject(problemError(p))
	}
	return d.a2aSign()
}

// problemError converts a problem of package a2a (stage 0, or a payload
// a guard cannot read) into the catalogue's error.
func problemError(p *a2a.Problem) *Error {
	e := &Error{Code: Code(p.Code), Message: p.Message, Details: p.Details()}
	if !e.Code.Known() {
		e.Code = CodeInvalidRequest
	}
	if len(e.Details) == 0 {
		e.Details = nil
	}
	return e
}

// a2aCredentials returns the boundary a message is checked against: the
// principal of the API key ("*" for the admin's), or the principal of the
// agent whose token was presented, which must then be the sender.
func (d *decider) a2aCredentials(m *a2a.Message) (string, *Error) {
	switch {
	case d.cmd.Principal != "":
		return d.cmd.Principal, nil
	case d.cmd.TokenHash == "":
		d.unauthenticated = true
		return "", Errorf(CodeMissingAPIKey, "an API key or an agent token is required")
	}
	a, err := d.authAgent(false)
	if err != nil {
		return "", err
	}
	if m.SenderAgentID != a.ID {
		// Authenticated: the refusal keeps the message (nothing to hide
		// from the agent's own record).
		return "", &Error{Code: CodeForbidden, Message: "an agent token sends only its agent's messages: sender_agent_id is not '" + a.ID + "'",
			Details: Details{"field": "sender_agent_id"}}
	}
	return a.Info.PrincipalID, nil
}

// a2aTrust applies the trust boundary (stage 2) and reports whether the
// message passed it; when it did not, the verdict is set.
func (d *decider) a2aTrust(cfg *A2AConfig, v *A2AVerdict) bool {
	var own, global *A2ABoundary
	if st := d.s.A2A; st != nil {
		global = st.Boundaries[AdminPrincipal]
		if v.Boundary != AdminPrincipal {
			own = st.Boundaries[v.Boundary]
		}
	}
	blocked := func(agent string) bool {
		return global != nil && has(global.Blocked, agent) || own != nil && has(own.Blocked, agent)
	}
	pair := A2AAgents{Sender: v.Sender, Receiver: v.Receiver}
	var reason string
	switch {
	case blocked(v.Sender):
		reason = "sender '" + v.Sender + "' is blocked"
	case blocked(v.Receiver):
		reason = "receiver '" + v.Receiver + "' is blocked"
	case global != nil && hasPair(global.BlockedPairs, pair) || own != nil && hasPair(own.BlockedPairs, pair):
		reason = "pair '" + v.Sender + "' -> '" + v.Receiver + "' is blocked"
	case !cfg.DefaultAllow && !a2aAllowed(cfg, global, own, v.Sender):
		reason = "sender '" + v.Sender + "' is not allowlisted (deny-all: sender and receiver must both be trusted)"
	case !cfg.DefaultAllow && !a2aAllowed(cfg, global, own, v.Receiver):
		reason = "receiver '" + v.Receiver + "' is not allowlisted (deny-all: sender and receiver must both be trusted)"
	}
	if reason != "" {
		v.Status, v.Engine, v.Reason = a2a.StatusBlocked, a2a.EngineTrust, reason
		d.ev.Error = &Error{Code: CodeA2ATrustBlocked, Message: reason}
		return false
	}
	wait, ok := d.a2aTake(cfg, A2APair{Boundary: v.Boundary, A2AAgents: pair})
	if ok {
		return true
	}
	// Rounded up without overflow: a wait of the longest idle_evict is
	// near math.MaxInt64 nanoseconds.
	ms := int64(wait / time.Millisecond)
	if wait%time.Millisecond != 0 {
		ms++
	}
	v.Status, v.Engine, v.RetryAfterMs = a2a.StatusRateLimited, a2a.EngineTrust, ms
	v.Reason = "rate limit of pair '" + v.Sender + "' -> '" + v.Receiver + "' exceeded: retry after " + strconv.FormatInt(ms, 10) + " ms"
	d.ev.Error = &Error{Code: CodeA2ARateLimited, Message: v.Reason}
	return false
}

// a2aAllowed reports whether agent is allowlisted: trusted gate-wide (the
// configuration or the "*" boundary) or by the message's boundary.
func a2aAllowed(cfg *A2AConfig, global, own *A2ABoundary, agent string) bool {
	return has(cfg.TrustedAgents, agent) || global != nil && has(global.Trusted, agent) || own != nil && has(own.Trusted, agent)
}

// a2aTake takes a token from the pair's bucket, on a copy: Apply takes it
// from the state's when it folds the verdict. A new bucket past
// MaxA2ABuckets is refused (fail closed) unless the least recently used
// one is evictable (a2aEvictable), which that Apply then evicts; so is a
// new bucket of a boundary that would still hold MaxA2ABucketsPerBoundary
// after those evictions (retry after IdleEvict).
func (d *decider) a2aTake(cfg *A2AConfig, key A2APair) (time.Duration, bool) {
	var b a2a.Bucket
	if st := d.s.A2A; st != nil {
		if cur := st.Buckets[key]; cur != nil {
			b = cur.Bucket
		} else if old := st.lru.head; len(st.Buckets) >= MaxA2ABuckets && !a2aEvictable(cfg, old, d.now) {
			return max(time.Unix(0, old.Bucket.Last).Add(time.Duration(cfg.IdleEvict)).Sub(d.now), time.Millisecond), false
		} else if st.boundaryFull(cfg, key.Boundary, d.now) {
			// One tenant never takes the others' buckets: its own
			// come back as they go idle.
			return max(time.Duration(cfg.IdleEvict), time.Millisecond), false
		}
	}
	ok, wait := b.Take(d.now, cfg.RatePerMinute, cfg.Burst)
	return wait, ok
}

// a2aEvictable reports whether a bucket may be evicted at now: idle for
// IdleEvict and full again, so that forgetting it (a new bucket is full)
// changes no decision.
func a2aEvictable(cfg *A2AConfig, b *A2ABucket, now time.Time) bool {
	return b != nil && b.Bucket.Idle(now, time.Duration(cfg.IdleEvict)) && b.Bucket.Full(now, cfg.RatePerMinute)
}

// a2aRoute runs the payload type's guard (stage 4) and sets the verdict;
// it returns the guard's problem with a payload it cannot read.
func (d *decider) a2aRoute(cfg *A2AConfig, m *a2a.Message, v *A2AVerdict) *a2a.Problem {
	v.Status, v.Engine = a2a.StatusForwarded, a2a.EnginePassthrough
	var r a2a.Result
	var code Code
	switch m.PayloadType {
	case a2a.PayloadFinancial:
		if !cfg.EnableFinancialVerification {
			v.Reason = "financial verification disabled: passthrough"
			return nil
		}
		r, code = a2a.FinanceCheck(m.Payload), CodeA2AFinance
	case a2a.PayloadLogic:
		if !cfg.EnableLogicVerification {
			v.Reason = "logic verification disabled: passthrough"
			return nil
		}
		r, code = a2a.LogicGuard(m.Payload), CodeA2ALogic
	case a2a.PayloadCode:
		if !cfg.EnableCodeVerification {
			v.Reason = "code verification disabled: passthrough"
			return nil
		}
		r, code = a2a.CodeGuardPayload(m.Payload), CodeA2ACode
	case a2a.PayloadDataQuery:
		v.Reason = "data_query: passthrough"
		return nil
	default:
		v.Reason = "general: passthrough"
		return nil
	}
	v.Engine = r.Engine
	if r.Problem != nil {
		return r.Problem
	}
	if r.Blocked {
		dt := &d.a2a.dt
		dt.ClaimedTotal, dt.ComputedTotal, dt.Contradictions, dt.Patterns = r.ClaimedTotal, r.ComputedTotal, r.Contradictions, r.Patterns
		if ev := d.cmd.Verdict; ev != nil && ev.Engine == a2aVerdictEngine(m.PayloadType) {
			dt.Findings = ev.Findings
		}
		d.a2aBlock(Code(r.Code), v, r.Reason, dt)
		return nil
	}
	if m.PayloadType == a2a.PayloadFinancial {
		v.Reason = r.Reason
		return nil
	}
	d.a2aVerdict(cfg, v, code, r.Reason, a2aVerdictEngine(m.PayloadType))
	return nil
}

// a2aVerdictEngine returns the engine whose verdict a message of payload
// type pt takes (A2AEngineAction's action type's): the code engine for
// code_execution, the logic engine for logic_assertion (its "dsl"); ""
// for the others.
func a2aVerdictEngine(pt a2a.PayloadType) string {
	switch pt {
	case a2a.PayloadCode:
		return actionSpecs["execute_code"].Engine
	case a2a.PayloadLogic:
		return actionSpecs["verify_logic"].Engine
	}
	return ""
}

// a2aVerdict folds the engine verdict attached to a logic or code message
// (the logic engine on its "dsl", the code engine on its code) into v, a
// message its guard passed: FAILED or BLOCKED, or a critical or high
// finding, blocks it; ERROR, TIMEOUT or UNSUPPORTED is an engine error.
// Without a verdict the guard's word stands. A verdict of another engine
// than want (the payload type's) is a transport fault, never trusted: an
// engine error, as applyVerdict makes it uncertain for a verify_action.
func (d *decider) a2aVerdict(cfg *A2AConfig, v *A2AVerdict, code Code, ok, want string) {
	ev := d.cmd.Verdict
	if ev == nil {
		v.Reason = ok
		return
	}
	if ev.Engine != want {
		d.a2aEngineError(cfg, v, "verdict of engine '"+ev.Engine+"' does not answer a "+string(v.PayloadType)+" message")
		return
	}
	severeFinding := false
	for i := range ev.Findings {
		if severe(&ev.Findings[i]) {
			severeFinding = true
			break
		}
	}
	why := ev.Reason
	if why == "" {
		why = "engine " + ev.Engine + " answered " + string(ev.Status)
	}
	switch {
	case ev.Status == engines.Failed || ev.Status == engines.Blocked || severeFinding:
		dt := &d.a2a.dt
		dt.Findings = ev.Findings
		d.a2aBlock(code, v, why, dt)
	case ev.Status == engines.Verified || ev.Status == engines.Corrected:
		v.Reason = ok
		if len(ev.Findings) > 0 {
			dt := &d.a2a.dt
			dt.Findings = ev.Findings
			v.Details = dt
		}
	default:
		d.a2aEngineError(cfg, v, why)
	}
}

// a2aBlock blocks the message with code.
func (d *decider) a2aBlock(code Code, v *A2AVerdict, reason string, dt *A2ADetails) {
	v.Status, v.Reason, v.Details = a2a.StatusBlocked, reason, dt
	d.ev.Error = &Error{Code: code, Message: reason}
}

// a2aEngineError records an engine error: an error verdict
// (block_on_error), or the message forwarded in shadow mode.
func (d *decider) a2aEngineError(cfg *A2AConfig, v *A2AVerdict, msg string) {
	dt := &d.a2a.dt
	dt.EngineError = msg
	v.Details = dt
	if !cfg.BlockOnError {
		v.Status, v.Shadow = a2a.StatusForwarded, true
		v.Reason = v.Engine + " failed; forwarded in shadow mode (block_on_error false)"
		return
	}
	v.Status, v.Reason = a2a.StatusError, v.Engine+" failed: "+msg
	d.ev.Error = &Error{Code: CodeA2AEngineError, Message: v.Reason}
}

// a2aSign signs the verdict (stage 5). No signer, a signer that cannot
// sign A2A attestations, or a signing error turn it into an error verdict
// without an attestation: no verdict is returned unsigned.
func (d *decider) a2aSign() *Event {
	v := &d.a2a.v
	var tok string
	var err error
	if s, ok := d.env.Signer.(a2a.Signer); ok {
		tok, err = s.SignA2A(a2a.Claims{Subject: v.PayloadDigest, TraceID: v.TraceID, IssuedAt: d.now,
			Verdict: v.Status, Engine: v.Engine, Sender: v.Sender, Receiver: v.Receiver})
	}
	if err != nil || tok == "" {
		v.Status, v.Shadow, v.RetryAfterMs = a2a.StatusError, false, 0
		v.Reason = "attestation could not be issued"
		d.ev.Error = &Error{Code: CodeA2AAttestation, Message: v.Reason}
		return d.ev
	}
	v.Attestation = tok
	return d.ev
}

// a2aBoundary decides a qwed.a2a.boundary command: a principal changes its
// own boundary, the admin the gate-wide one; agent tokens change none.
func (d *decider) a2aBoundary() *Event {
	r := d.cmd.A2ABoundary
	if r == nil {
		return d.reject(missing("a2a_boundary"))
	}
	switch {
	case d.cmd.Principal != "":
	case d.cmd.TokenHash != "":
		return d.reject(Errorf(CodeForbidden, "an agent token cannot change a trust boundary: use a principal API key"))
	default:
		return d.reject(Errorf(CodeMissingAPIKey, "a principal API key is required"))
	}
	var cur *A2ABoundary
	if d.s.A2A != nil {
		cur = d.s.A2A.Boundaries[d.cmd.Principal]
	}
	if cur == nil {
		cur = &A2ABoundary{}
	}
	agentOp := func(list []string, limit bool) *Error {
		if r.Sender != "" || r.Receiver != "" {
			return fieldError(CodeInvalidRequest, "a2a_boundary", "op '%s' names an agent, not a pair", r.Op)
		}
		if r.Agent == "" {
			return missing("a2a_boundary.agent")
		}
		if !validA2AAgent(r.Agent) {
			return fieldError(CodeInvalidRequest, "a2a_boundary.agent", "must be 1-%d characters without control characters", a2a.MaxAgentIDChars)
		}
		if limit && !has(list, r.Agent) && len(list) >= MaxA2AAgents {
			return fieldError(CodeInvalidRequest, "a2a_boundary.agent", "the boundary already lists %d agents", MaxA2AAgents)
		}
		return nil
	}
	pairOp := func(limit bool) *Error {
		if r.Agent != "" {
			return fieldError(CodeInvalidRequest, "a2a_boundary", "op '%s' names a pair, not an agent", r.Op)
		}
		for _, f := range [...]struct{ name, v string }{{"a2a_boundary.sender", r.Sender}, {"a2a_boundary.receiver", r.Receiver}} {
			if f.v == "" {
				return missing(f.name)
			}
			if !validA2AAgent(f.v) {
				return fieldError(CodeInvalidRequest, f.name, "must be 1-%d characters without control characters", a2a.MaxAgentIDChars)
			}
		}
		if limit && !hasPair(cur.BlockedPairs, A2AAgents{r.Sender, r.Receiver}) && len(cur.BlockedPairs) >= MaxA2APairs {
			return fieldError(CodeInvalidRequest, "a2a_boundary", "the boundary already blocks %d pairs", MaxA2APairs)
		}
		return nil
	}
	var err *Error
	switch r.Op {
	case A2AOpTrust:
		err = agentOp(cur.Trusted, true)
	case A2AOpUntrust:
		err = agentOp(cur.Trusted, false)
	case A2AOpBlock:
		err = agentOp(cur.Blocked, true)
	case A2AOpUnblock:
		err = agentOp(cur.Blocked, false)
	case A2AOpBlockPair:
		err = pairOp(true)
	case A2AOpUnblockPair:
		err = pairOp(false)
	case "":
		err = missing("a2a_boundary.op")
	default:
		err = fieldError(CodeInvalidRequest, "a2a_boundary.op", "'%s' is not one of trust, untrust, block, unblock, block_pair, unblock_pair", r.Op)
	}
	if err != nil {
		return d.reject(err)
	}
	c := *r
	d.ev.Type = EvA2ABoundaryChanged
	d.ev.A2ABoundary = &c
	return d.ev
}
