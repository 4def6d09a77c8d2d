package eventjson

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// The decoder: one function per domain type, reading the members that
// the encoder writes for it (in any order, each at most once, keys in
// their exact case). A member whose key is no field name in any case is
// skipped (an event written by a newer version; see unknown).

// slots are structs of one event allocated together: the event type, read
// before the payloads in encoding/json's member order, says which of the
// blocks below to allocate, and the type functions take their struct from
// it (a struct whose slot is taken or missing is allocated alone). Apply
// copies what the state keeps, so a block lives as long as its event.
type slots struct {
	cmd      *domain.Command
	verify   *domain.VerifyAction
	decided  *domain.ActionDecided
	exec     *domain.LogExecution
	executed *domain.ExecutionLogged
	ck       *domain.LogCheckpoint
	errs     []domain.Error
	usd      []domain.USD
	ints     []int64
}

type decidedBlock struct {
	ev      domain.Event
	cmd     domain.Command
	verify  domain.VerifyAction
	decided domain.ActionDecided
	errs    [2]domain.Error
	usd     [1]domain.USD
	ints    [5]int64
}

type executedBlock struct {
	ev       domain.Event
	cmd      domain.Command
	exec     domain.LogExecution
	executed domain.ExecutionLogged
	usd      [1]domain.USD
	ints     [5]int64
}

type rejectedBlock struct {
	ev   domain.Event
	cmd  domain.Command
	errs [1]domain.Error
}

type checkpointBlock struct {
	ev domain.Event
	ck domain.LogCheckpoint
}

// allocate returns the event of an event of type t, allocated with the
// structs of its payload where t has a block.
func (d *decoder) allocate(t domain.EventType) *domain.Event {
	switch t {
	case domain.EvActionDecided:
		b := new(decidedBlock)
		d.slots = slots{cmd: &b.cmd, verify: &b.verify, decided: &b.decided, errs: b.errs[:], usd: b.usd[:], ints: b.ints[:]}
		return &b.ev
	case domain.EvExecutionLogged:
		b := new(executedBlock)
		d.slots = slots{cmd: &b.cmd, exec: &b.exec, executed: &b.executed, usd: b.usd[:], ints: b.ints[:]}
		return &b.ev
	case domain.EvCommandRejected:
		b := new(rejectedBlock)
		d.slots = slots{cmd: &b.cmd, errs: b.errs[:]}
		return &b.ev
	case domain.EvLogCheckpointed:
		b := new(checkpointBlock)
		d.slots = slots{ck: &b.ck}
		return &b.ev
	}
	return new(domain.Event)
}

// foldSkips skips the next value when the decoder reads for a fold
// (DecodeFoldEvent), reporting whether it did.
func (d *decoder) foldSkips() bool {
	if d.fold {
		d.skip(0)
	}
	return d.fold
}

// take returns the slot *p and empties it, or a new T.
func take[T any](p **T) *T {
	if v := *p; v != nil {
		*p = nil
		return v
	}
	return new(T)
}

// takeOne returns the first element of the slots *s, or a new T.
func takeOne[T any](s *[]T) *T {
	if len(*s) > 0 {
		v := &(*s)[0]
		*s = (*s)[1:]
		return v
	}
	return new(T)
}

// event decodes an event. The members before the type (in encoding/json's
// order: seq, prev, partition, time) are held aside until the type says
// which block to allocate the event in; a payload before the type
// allocates the event alone.
func (d *decoder) event() *domain.Event {
	var seen uint64
	var ev *domain.Event
	var seq uint64
	var prev string
	var partition int32
	var at time.Time
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "seq":
			d.once(&seen, 0)
			seq = d.uint64()
			continue
		case "prev":
			d.once(&seen, 1)
			prev = d.str()
			continue
		case "partition":
			d.once(&seen, 2)
			partition = d.int32()
			continue
		case "time":
			d.once(&seen, 3)
			d.time(&at)
			continue
		case "type":
			d.once(&seen, 4)
			t := domain.EventType(d.enum())
			if ev == nil {
				ev = d.allocate(t)
			}
			ev.Type = t
			continue
		}
		if ev == nil {
			ev = new(domain.Event) // a payload before the type
		}
		switch string(k) {
		case "command":
			d.once(&seen, 5)
			ev.Command = take(&d.slots.cmd)
			d.command(ev.Command)
		case "agent_id":
			d.once(&seen, 6)
			if ev.Command != nil {
				ev.AgentID = d.same(ev.Command.AgentID)
			} else {
				ev.AgentID = d.str()
			}
		case "error":
			d.once(&seen, 7)
			if d.foldSkips() {
				continue
			}
			ev.Error = takeOne(&d.slots.errs)
			d.error(ev.Error, nil)
		case "registered":
			d.once(&seen, 8)
			ev.Registered = new(domain.AgentRegistered)
			d.agentRegistered(ev.Registered)
		case "decided":
			d.once(&seen, 9)
			ev.Decided = take(&d.slots.decided)
			d.actionDecided(ev.Decided, ev)
		case "executed":
			d.once(&seen, 10)
			ev.Executed = take(&d.slots.executed)
			d.executionLogged(ev.Executed, ev.Command)
		case "resolved":
			d.once(&seen, 11)
			ev.Resolved = new(domain.ApprovalResolved)
			d.approvalResolved(ev.Resolved)
		case "trust_changed":
			d.once(&seen, 12)
			ev.TrustChanged = new(domain.TrustChange)
			d.trustChange(ev.TrustChanged)
		case "status":
			d.once(&seen, 13)
			ev.Status = new(domain.AgentStatusChange)
			d.agentStatusChange(ev.Status)
		case "expired":
			d.once(&seen, 14)
			ev.Expired = new(domain.ApprovalsExpired)
			d.approvalsExpired(ev.Expired)
		case "elevation":
			d.once(&seen, 17)
			ev.Elevation = new(domain.TrustElevationRequested)
			d.elevationRequested(ev.Elevation)
		case "tool_registry":
			d.once(&seen, 18)
			ev.ToolRegistry = new(domain.PutToolRegistry)
			d.toolRegistry(ev.ToolRegistry)
		case "key_issued":
			d.once(&seen, 19)
			ev.KeyIssued = new(domain.IssuePrincipalKey)
			d.issueKey(ev.KeyIssued)
		case "configured":
			d.once(&seen, 20)
			ev.Configured = new(domain.Config)
			d.config(ev.Configured)
		case "qwed_verified":
			d.once(&seen, 15)
			ev.QWEDVerified = new(domain.QWEDVerified)
			d.qwedVerified(ev.QWEDVerified)
		case "checkpoint":
			d.once(&seen, 16)
			ev.Checkpoint = take(&d.slots.ck)
			d.logCheckpoint(ev.Checkpoint, prev)
		case "key_revoked":
			d.once(&seen, 21)
			ev.KeyRevoked = new(domain.IssuePrincipalKey)
			d.issueKey(ev.KeyRevoked)
		case "token_changed":
			d.once(&seen, 22)
			ev.TokenChanged = new(domain.AgentTokenChange)
			d.tokenChange(ev.TokenChanged)
		case "a2a_verdict":
			d.once(&seen, 23)
			ev.A2AVerdict = new(domain.A2AVerdict)
			d.a2aVerdict(ev.A2AVerdict)
		case "a2a_boundary":
			d.once(&seen, 24)
			ev.A2ABoundary = new(domain.A2ABoundaryChange)
			d.a2aBoundary(ev.A2ABoundary)
		case "principal_permissions":
			d.once(&seen, 48)
			ev.PrincipalPermissions = new(domain.PrincipalPermissions)
			d.principalPermissions(ev.PrincipalPermissions)
		default:
			if !d.execEvent(k, ev, &seen) {
				d.unknown(k, reflect.TypeFor[domain.Event]())
			}
		}
	}
	if ev == nil {
		ev = new(domain.Event)
	}
	ev.Seq, ev.Prev, ev.Partition, ev.Time = seq, prev, partition, at
	return ev
}

func (d *decoder) command(c *domain.Command) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "type":
			d.once(&seen, 0)
			c.Type = domain.CommandType(d.enum())
		case "request":
			d.once(&seen, 1)
			d.requestID(&c.Request)
		case "principal":
			d.once(&seen, 2)
			c.Principal = d.str()
		case "agent_id":
			d.once(&seen, 3)
			c.AgentID = d.str()
		case "token_hash":
			d.once(&seen, 4)
			if d.foldSkips() {
				continue
			}
			c.TokenHash = d.str()
		case "register":
			d.once(&seen, 5)
			c.Register = new(domain.RegisterAgent)
			d.registerAgent(c.Register)
		case "verify":
			d.once(&seen, 6)
			if d.foldSkips() {
				continue
			}
			c.Verify = take(&d.slots.verify)
			d.verifyAction(c.Verify)
		case "tool":
			d.once(&seen, 7)
			if d.foldSkips() {
				continue
			}
			c.Tool = new(domain.VerifyToolCall)
			d.verifyToolCall(c.Tool)
		case "execution":
			d.once(&seen, 8)
			c.Execution = take(&d.slots.exec)
			d.logExecution(c.Execution)
		case "trust":
			d.once(&seen, 17)
			c.Trust = new(domain.RequestTrustElevation)
			d.requestTrust(c.Trust)
		case "tool_registry":
			d.once(&seen, 18)
			c.ToolRegistry = new(domain.PutToolRegistry)
			d.toolRegistry(c.ToolRegistry)
		case "issue_key":
			d.once(&seen, 19)
			c.IssueKey = new(domain.IssuePrincipalKey)
			d.issueKey(c.IssueKey)
		case "configure":
			d.once(&seen, 20)
			c.Configure = new(domain.Configure)
			d.configure(c.Configure)
		case "resolve":
			d.once(&seen, 9)
			c.Resolve = new(domain.ResolveApproval)
			d.resolveApproval(c.Resolve)
		case "set_trust":
			d.once(&seen, 10)
			c.SetTrust = new(domain.SetTrustLevel)
			d.setTrustLevel(c.SetTrust)
		case "suspend":
			d.once(&seen, 11)
			c.Suspend = new(domain.SuspendAgent)
			d.suspendAgent(c.Suspend)
		case "complaint":
			d.once(&seen, 12)
			c.Complaint = new(domain.FileComplaint)
			d.fileComplaint(c.Complaint)
		case "tick":
			d.once(&seen, 13)
			c.Tick = new(domain.Tick)
			d.openObject()
			for k := d.next(); k != nil; k = d.next() {
				d.unknown(k, reflect.TypeFor[domain.Tick]())
			}
		case "reject":
			d.once(&seen, 14)
			c.Reject = new(domain.RejectRequest)
			d.rejectRequest(c.Reject)
		case "qwed_verify":
			d.once(&seen, 15)
			c.QWEDVerify = new(domain.QWEDVerify)
			d.qwedVerify(c.QWEDVerify)
		case "verdict":
			d.once(&seen, 16)
			c.Verdict = new(domain.EngineVerdict)
			d.engineVerdict(c.Verdict)
		case "withheld":
			d.once(&seen, 21)
			c.Withheld = new(domain.WithheldBody)
			d.withheldBody(c.Withheld)
		case "revoke_key":
			d.once(&seen, 22)
			c.RevokeKey = new(domain.IssuePrincipalKey)
			d.issueKey(c.RevokeKey)
		case "new_token":
			d.once(&seen, 23)
			c.NewToken = new(domain.AgentTokenChange)
			d.tokenChange(c.NewToken)
		case "a2a":
			d.once(&seen, 24)
			c.A2A = new(a2a.Message)
			d.a2aMessage(c.A2A)
		case "a2a_digest":
			d.once(&seen, 26)
			c.A2ADigest = d.str()
		case "a2a_boundary":
			d.once(&seen, 25)
			c.A2ABoundary = new(domain.A2ABoundaryChange)
			d.a2aBoundary(c.A2ABoundary)
		case "global":
			d.once(&seen, 28)
			c.Global = d.bool()
		case "copy":
			d.once(&seen, 27)
			c.Copy = new(domain.PrincipalStateCopy)
			d.stateCopy(c.Copy)
		case "output_scan":
			d.once(&seen, 48)
			c.OutputScan = new(domain.OutputScan)
			d.outputScan(c.OutputScan)
		case "principal_permissions":
			d.once(&seen, 49)
			c.PrincipalPermissions = new(domain.PrincipalPermissions)
			d.principalPermissions(c.PrincipalPermissions)
		default:
			if !d.execCommand(k, c, &seen) {
				d.unknown(k, reflect.TypeFor[domain.Command]())
			}
		}
	}
}

func (d *decoder) stateCopy(c *domain.PrincipalStateCopy) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "from":
			d.once(&seen, 0)
			c.From = d.int32()
		case "seq":
			d.once(&seen, 1)
			c.Seq = d.uint64()
		case "hash":
			d.once(&seen, 2)
			c.Hash = d.str()
		case "offset":
			d.once(&seen, 3)
			c.Offset = d.int64()
		case "changes":
			d.once(&seen, 4)
			if d.null() {
				continue
			}
			c.Changes = []domain.CopiedChange{}
			d.array(func() {
				c.Changes = append(c.Changes, domain.CopiedChange{})
				d.copiedChange(&c.Changes[len(c.Changes)-1])
			})
		default:
			d.unknown(k, reflect.TypeFor[domain.PrincipalStateCopy]())
		}
	}
}

func (d *decoder) copiedChange(c *domain.CopiedChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "seq":
			d.once(&seen, 0)
			c.Seq = d.uint64()
		case "type":
			d.once(&seen, 1)
			c.Type = domain.EventType(d.enum())
		case "principal":
			d.once(&seen, 2)
			c.Principal = d.str()
		case "tool_registry":
			d.once(&seen, 3)
			c.ToolRegistry = new(domain.PutToolRegistry)
			d.toolRegistry(c.ToolRegistry)
		case "key_issued":
			d.once(&seen, 4)
			c.KeyIssued = new(domain.IssuePrincipalKey)
			d.issueKey(c.KeyIssued)
		case "key_revoked":
			d.once(&seen, 5)
			c.KeyRevoked = new(domain.IssuePrincipalKey)
			d.issueKey(c.KeyRevoked)
		case "configured":
			d.once(&seen, 6)
			c.Configured = new(domain.Config)
			d.config(c.Configured)
		case "a2a_boundary":
			d.once(&seen, 7)
			c.A2ABoundary = new(domain.A2ABoundaryChange)
			d.a2aBoundary(c.A2ABoundary)
		case "business":
			d.once(&seen, 8)
			c.Business = new(domain.Business)
			d.business(c.Business)
		case "principal_permissions":
			d.once(&seen, 9)
			c.PrincipalPermissions = new(domain.PrincipalPermissions)
			d.principalPermissions(c.PrincipalPermissions)
		default:
			d.unknown(k, reflect.TypeFor[domain.CopiedChange]())
		}
	}
}

func (d *decoder) requestID(r *domain.RequestID) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "source":
			d.once(&seen, 0)
			r.Source = d.enum()
		case "id":
			d.once(&seen, 1)
			r.ID = d.str()
		case "scope":
			d.once(&seen, 2)
			r.Scope = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.RequestID]())
		}
	}
}

func (d *decoder) registerAgent(r *domain.RegisterAgent) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "agent":
			d.once(&seen, 0)
			d.agentInfo(&r.Agent)
		case "permissions":
			d.once(&seen, 1)
			d.permissions(&r.Permissions)
		case "budget":
			d.once(&seen, 2)
			d.limits(&r.Budget)
		case "trust_level":
			d.once(&seen, 3)
			t := d.trustLevel()
			r.TrustLevel = &t
		case "token_hash":
			d.once(&seen, 4)
			r.TokenHash = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.RegisterAgent]())
		}
	}
}

func (d *decoder) agentInfo(a *domain.AgentInfo) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "name":
			d.once(&seen, 0)
			a.Name = d.str()
		case "type":
			d.once(&seen, 1)
			a.Type = d.enum()
		case "description":
			d.once(&seen, 2)
			a.Description = d.str()
		case "principal_id":
			d.once(&seen, 3)
			a.PrincipalID = d.str()
		case "framework":
			d.once(&seen, 4)
			a.Framework = d.str()
		case "model":
			d.once(&seen, 5)
			a.Model = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.AgentInfo]())
		}
	}
}

func (d *decoder) permissions(p *domain.Permissions) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "allowed_engines":
			d.once(&seen, 0)
			p.AllowedEngines = d.strings()
		case "allowed_tools":
			d.once(&seen, 1)
			p.AllowedTools = d.strings()
		case "blocked_tools":
			d.once(&seen, 2)
			p.BlockedTools = d.strings()
		case "allowed_paths":
			d.once(&seen, 3)
			p.AllowedPaths = d.strings()
		case "denied_paths":
			d.once(&seen, 4)
			p.DeniedPaths = d.strings()
		case "allowed_hosts":
			d.once(&seen, 5)
			p.AllowedHosts = d.strings()
		case "allowed_schemes":
			d.once(&seen, 6)
			p.AllowedSchemes = d.strings()
		case "allowed_ports":
			d.once(&seen, 7)
			p.AllowedPorts = d.ints()
		default:
			d.unknown(k, reflect.TypeFor[domain.Permissions]())
		}
	}
}

func (d *decoder) principalPermissions(p *domain.PrincipalPermissions) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "principal_id":
			d.once(&seen, 0)
			p.PrincipalID = d.str()
		case "allowed_paths":
			d.once(&seen, 3)
			p.AllowedPaths = d.strings()
		case "denied_paths":
			d.once(&seen, 4)
			p.DeniedPaths = d.strings()
		case "allowed_hosts":
			d.once(&seen, 5)
			p.AllowedHosts = d.strings()
		case "allowed_schemes":
			d.once(&seen, 6)
			p.AllowedSchemes = d.strings()
		case "allowed_ports":
			d.once(&seen, 7)
			p.AllowedPorts = d.ints()
		default:
			d.unknown(k, reflect.TypeFor[domain.PrincipalPermissions]())
		}
	}
}

// limits decodes domain.Limits in the flat form the encoder writes (a
// null leaves them zero, as domain.Limits' own decoder does). The nested
// form of the request bodies is not the event format: it is refused, and
// so is any member the flat form does not have (domain.Limits refuses
// those too).
func (d *decoder) limits(l *domain.Limits) {
	if d.null() {
		return
	}
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "max_daily_cost_usd":
			d.once(&seen, 0)
			l.MaxDailyCost = d.usd()
		case "max_per_request_cost_usd":
			d.once(&seen, 1)
			l.MaxPerRequestCost = d.usd()
		case "max_requests_per_hour":
			d.once(&seen, 2)
			l.MaxRequestsPerHour = d.int64()
		case "max_requests_per_day":
			d.once(&seen, 3)
			l.MaxRequestsPerDay = d.int64()
		case "max_tokens_per_request":
			d.once(&seen, 4)
			l.MaxTokensPerRequest = d.int64()
		case "max_daily_tokens":
			d.once(&seen, 5)
			l.MaxDailyTokens = d.int64()
		case "max_tool_calls_per_hour":
			d.once(&seen, 6)
			l.MaxToolCallsPerHour = d.int64()
		case "max_high_risk_calls_per_day":
			d.once(&seen, 7)
			l.MaxHighRiskCallsDay = d.int64()
		default:
			d.fail()
		}
	}
}

func (d *decoder) verifyAction(v *domain.VerifyAction) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		if !d.verifyMember(k, v, &seen) {
			d.unknown(k, reflect.TypeFor[domain.VerifyAction]())
		}
	}
}

// verifyMember decodes the member k of a domain.VerifyAction object (its
// bits 0 to 2 in seen) and reports whether k is one of its members.
func (d *decoder) verifyMember(k []byte, v *domain.VerifyAction, seen *uint64) bool {
	switch string(k) {
	case "action":
		d.once(seen, 0)
		d.action(&v.Action)
	case "context":
		d.once(seen, 1)
		d.actionContext(&v.Context)
	case "options":
		d.once(seen, 2)
		d.options(&v.Options)
	default:
		return false
	}
	return true
}

func (d *decoder) action(a *domain.Action) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "type":
			d.once(&seen, 0)
			a.Type = d.enum()
		case "query":
			d.once(&seen, 1)
			a.Query = d.str()
		case "code":
			d.once(&seen, 2)
			a.Code = d.str()
		case "target":
			d.once(&seen, 3)
			a.Target = d.str()
		case "parameters":
			d.once(&seen, 4)
			a.Parameters = d.rawMessage()
		case "estimated_cost_usd":
			d.once(&seen, 5)
			a.EstimatedCost = d.usd()
		case "estimated_tokens":
			d.once(&seen, 6)
			a.EstimatedTokens = d.int64()
		case "output":
			d.once(&seen, 7)
			a.Output = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Action]())
		}
	}
}

// rawMessage copies a value's bytes, as json.RawMessage.UnmarshalJSON does
// (a null included).
func (d *decoder) rawMessage() json.RawMessage {
	raw := d.raw()
	if d.failed {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

func (d *decoder) actionContext(c *domain.ActionContext) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "conversation_id":
			d.once(&seen, 0)
			c.ConversationID = d.str()
		case "step_number":
			d.once(&seen, 1)
			c.StepNumber = json.Number(d.jsonNumber())
		case "user_intent":
			d.once(&seen, 2)
			c.UserIntent = d.str()
		case "pre_action_state_hash":
			d.once(&seen, 3)
			c.PreActionStateHash = d.str()
		case "state_source":
			d.once(&seen, 4)
			c.StateSource = d.enum()
		default:
			d.unknown(k, reflect.TypeFor[domain.ActionContext]())
		}
	}
}

func (d *decoder) options(o *domain.Options) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "require_attestation":
			d.once(&seen, 0)
			o.RequireAttestation = d.bool()
		case "risk_threshold":
			d.once(&seen, 1)
			o.RiskThreshold = d.enum()
		default:
			d.unknown(k, reflect.TypeFor[domain.Options]())
		}
	}
}

func (d *decoder) verifyToolCall(v *domain.VerifyToolCall) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "tool_call":
			d.once(&seen, 0)
			d.toolCall(&v.ToolCall)
		case "justification":
			d.once(&seen, 1)
			v.Justification = d.str()
		case "context":
			d.once(&seen, 2)
			v.Context = new(domain.ActionContext)
			d.actionContext(v.Context)
		case "options":
			d.once(&seen, 3)
			d.options(&v.Options)
		default:
			d.unknown(k, reflect.TypeFor[domain.VerifyToolCall]())
		}
	}
}

func (d *decoder) toolCall(t *domain.ToolCall) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "tool_name":
			d.once(&seen, 0)
			t.ToolName = d.enum()
		case "parameters":
			d.once(&seen, 1)
			t.Parameters = d.rawMessage()
		case "estimated_cost_usd":
			d.once(&seen, 2)
			t.EstimatedCost = d.usd()
		case "estimated_tokens":
			d.once(&seen, 3)
			t.EstimatedTokens = d.int64()
		default:
			d.unknown(k, reflect.TypeFor[domain.ToolCall]())
		}
	}
}

func (d *decoder) logExecution(x *domain.LogExecution) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "action_id":
			d.once(&seen, 0)
			x.ActionID = d.str()
		case "success":
			d.once(&seen, 1)
			x.Success = d.bool()
		case "cost_usd":
			d.once(&seen, 2)
			x.CostUSD = d.usd()
		case "tokens":
			d.once(&seen, 3)
			x.Tokens = d.int64()
		case "result_hash":
			d.once(&seen, 4)
			x.ResultHash = d.str()
		case "sandboxed":
			d.once(&seen, 5)
			x.Sandboxed = d.bool()
		case "sandbox":
			d.once(&seen, 6)
			x.Sandbox = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.LogExecution]())
		}
	}
}

func (d *decoder) requestTrust(r *domain.RequestTrustElevation) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "request":
			d.once(&seen, 0)
			r.Request = d.str()
		case "from_level":
			d.once(&seen, 1)
			r.FromLevel = d.trustLevel()
		case "to_level":
			d.once(&seen, 2)
			r.ToLevel = d.trustLevel()
		case "justification":
			d.once(&seen, 3)
			r.Justification = d.str()
		case "evidence":
			d.once(&seen, 4)
			d.trustEvidence(&r.Evidence)
		default:
			d.unknown(k, reflect.TypeFor[domain.RequestTrustElevation]())
		}
	}
}

func (d *decoder) trustEvidence(t *domain.TrustEvidence) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "days_active":
			d.once(&seen, 0)
			t.DaysActive = d.int64()
		case "total_actions":
			d.once(&seen, 1)
			t.TotalActions = d.int64()
		case "denied_actions":
			d.once(&seen, 2)
			t.DeniedActions = d.int64()
		case "denial_rate":
			d.once(&seen, 3)
			t.DenialRate = json.Number(d.jsonNumber())
		case "attestations":
			d.once(&seen, 4)
			t.Attestations = d.int64()
		default:
			d.unknown(k, reflect.TypeFor[domain.TrustEvidence]())
		}
	}
}

func (d *decoder) toolRegistry(r *domain.PutToolRegistry) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "principal_id":
			d.once(&seen, 0)
			r.PrincipalID = d.str()
		case "tools":
			d.once(&seen, 1)
			if d.null() {
				continue // nil, as it is
			}
			r.Tools = []domain.ToolSpec{}
			d.array(func() {
				r.Tools = append(r.Tools, domain.ToolSpec{})
				d.toolSpec(&r.Tools[len(r.Tools)-1])
			})
		default:
			d.unknown(k, reflect.TypeFor[domain.PutToolRegistry]())
		}
	}
}

func (d *decoder) toolSpec(t *domain.ToolSpec) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "name":
			d.once(&seen, 0)
			t.Name = d.enum()
		case "risk_level":
			d.once(&seen, 1)
			t.RiskLevel = d.risk()
		case "requires_verification":
			d.once(&seen, 2)
			t.RequiresVerification = d.bool()
		case "requires_approval":
			d.once(&seen, 3)
			t.RequiresApproval = d.bool()
		case "verification_engine":
			d.once(&seen, 4)
			t.VerificationEngine = d.enum()
		case "sandbox_required":
			d.once(&seen, 5)
			t.SandboxRequired = d.bool()
		case "verify_parameters":
			d.once(&seen, 6)
			t.VerifyParameters = d.strings()
		default:
			d.unknown(k, reflect.TypeFor[domain.ToolSpec]())
		}
	}
}

func (d *decoder) issueKey(k *domain.IssuePrincipalKey) {
	var seen uint64
	d.openObject()
	for key := d.next(); key != nil; key = d.next() {
		switch string(key) {
		case "principal_id":
			d.once(&seen, 0)
			k.PrincipalID = d.str()
		case "key_hash":
			d.once(&seen, 1)
			k.KeyHash = d.str()
		case "key_id":
			d.once(&seen, 2)
			k.KeyID = d.str()
		case "replaces":
			d.once(&seen, 3)
			k.Replaces = d.str()
		case "replaced_hash":
			d.once(&seen, 4)
			k.ReplacedHash = d.str()
		default:
			d.unknown(key, reflect.TypeFor[domain.IssuePrincipalKey]())
		}
	}
}

func (d *decoder) tokenChange(t *domain.AgentTokenChange) {
	var seen uint64
	d.openObject()
	for key := d.next(); key != nil; key = d.next() {
		switch string(key) {
		case "token_hash":
			d.once(&seen, 0)
			t.TokenHash = d.str()
		default:
			d.unknown(key, reflect.TypeFor[domain.AgentTokenChange]())
		}
	}
}

func (d *decoder) configure(c *domain.Configure) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "config":
			d.once(&seen, 0)
			d.config(&c.Config)
		default:
			d.unknown(k, reflect.TypeFor[domain.Configure]())
		}
	}
}

func (d *decoder) config(c *domain.Config) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "approval_ttl":
			d.once(&seen, 0)
			c.ApprovalTTL = d.duration()
		case "doom_loop_guard_required":
			d.once(&seen, 1)
			c.DoomLoopGuardRequired = d.bool()
		case "max_steps":
			d.once(&seen, 2)
			c.MaxSteps = d.int64()
		case "withhold_refusals":
			d.once(&seen, 3)
			c.WithholdRefusals = d.bool()
		case "engine_sql_risk":
			d.once(&seen, 4)
			c.EngineSQLRisk = d.bool()
		case "detectors":
			d.once(&seen, 7)
			c.Detectors = d.bool()
		case "pii_guard":
			d.once(&seen, 8)
			c.PIIGuard = d.bool()
		case "a2a":
			d.once(&seen, 5)
			c.A2A = new(domain.A2AConfig)
			d.a2aConfig(c.A2A)
		case "execute":
			d.once(&seen, 6)
			c.Execute = new(domain.ExecuteConfig)
			d.executeConfig(c.Execute)
		case "tool_verification":
			d.once(&seen, 9)
			c.ToolVerification = d.bool()
		case "sandbox_attestation":
			d.once(&seen, 10)
			c.SandboxAttestation = d.bool()
		case "strict_guards":
			d.once(&seen, 20)
			c.StrictGuards = d.bool()
		case "agent_notices":
			d.once(&seen, 21)
			c.AgentNotices = d.bool()
		case "output_scan":
			d.once(&seen, 22)
			c.OutputScan = d.bool()
		case "idn_hosts":
			d.once(&seen, 11)
			c.IDNHosts = d.bool()
		case "principal_permissions":
			d.once(&seen, 12)
			c.PrincipalPermissions = d.bool()
		default:
			d.unknown(k, reflect.TypeFor[domain.Config]())
		}
	}
}

func (d *decoder) resolveApproval(r *domain.ResolveApproval) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "approval_id":
			d.once(&seen, 0)
			r.ApprovalID = d.str()
		case "approve":
			d.once(&seen, 1)
			r.Approve = d.bool()
		case "reason":
			d.once(&seen, 2)
			r.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.ResolveApproval]())
		}
	}
}

func (d *decoder) setTrustLevel(s *domain.SetTrustLevel) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "trust_level":
			d.once(&seen, 0)
			s.Level = d.trustLevel()
		case "reason":
			d.once(&seen, 1)
			s.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.SetTrustLevel]())
		}
	}
}

func (d *decoder) suspendAgent(s *domain.SuspendAgent) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "suspended":
			d.once(&seen, 0)
			s.Suspended = d.bool()
		case "reason":
			d.once(&seen, 1)
			s.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.SuspendAgent]())
		}
	}
}

func (d *decoder) fileComplaint(c *domain.FileComplaint) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "reason":
			d.once(&seen, 0)
			c.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.FileComplaint]())
		}
	}
}

func (d *decoder) withheldBody(w *domain.WithheldBody) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "digest":
			d.once(&seen, 0)
			w.Digest = d.str()
		case "bytes":
			d.once(&seen, 1)
			w.Bytes = d.int64()
		default:
			d.unknown(k, reflect.TypeFor[domain.WithheldBody]())
		}
	}
}

func (d *decoder) rejectRequest(r *domain.RejectRequest) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "error":
			d.once(&seen, 0)
			d.error(&r.Error, nil)
		case "endpoint":
			d.once(&seen, 1)
			r.Endpoint = d.str()
		case "body_digest":
			d.once(&seen, 2)
			r.BodyDigest = d.str()
		case "body_bytes":
			d.once(&seen, 3)
			r.BodyBytes = d.int64()
		default:
			d.unknown(k, reflect.TypeFor[domain.RejectRequest]())
		}
	}
}

func (d *decoder) qwedVerify(q *domain.QWEDVerify) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "batch":
			d.once(&seen, 0)
			q.Batch = d.bool()
		case "items":
			d.once(&seen, 1)
			if d.null() {
				continue // nil, as it is
			}
			q.Items = []domain.QWEDItem{}
			d.array(func() {
				q.Items = append(q.Items, domain.QWEDItem{})
				d.qwedItem(&q.Items[len(q.Items)-1])
			})
		default:
			d.unknown(k, reflect.TypeFor[domain.QWEDVerify]())
		}
	}
}

func (d *decoder) qwedItem(it *domain.QWEDItem) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "request_digest":
			d.once(&seen, 0)
			it.RequestDigest = d.str()
		case "type":
			d.once(&seen, 1)
			it.Type = d.enum()
		case "engine":
			d.once(&seen, 2)
			it.Engine = d.enum()
		case "engine_version":
			d.once(&seen, 3)
			it.EngineVersion = d.str()
		case "status":
			d.once(&seen, 4)
			it.Status = d.enum()
		case "outcome_digest":
			d.once(&seen, 5)
			it.OutcomeDigest = d.str()
		case "code":
			d.once(&seen, 6)
			it.Code = d.enum()
		case "attest":
			d.once(&seen, 7)
			it.Attest = d.bool()
		default:
			d.unknown(k, reflect.TypeFor[domain.QWEDItem]())
		}
	}
}

func (d *decoder) engineVerdict(v *domain.EngineVerdict) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "engine":
			d.once(&seen, 0)
			v.Engine = d.enum()
		case "engine_version":
			d.once(&seen, 1)
			v.EngineVersion = d.str()
		case "status":
			d.once(&seen, 2)
			v.Status = engines.Status(d.enum())
		case "outcome_digest":
			d.once(&seen, 3)
			v.OutcomeDigest = d.str()
		case "corrected":
			d.once(&seen, 4)
			v.Corrected = d.str()
		case "findings":
			d.once(&seen, 5)
			v.Findings = d.findings()
		case "risk":
			d.once(&seen, 6)
			v.Risk = d.risk()
		case "reason":
			d.once(&seen, 7)
			v.Reason = d.str()
		case "code":
			d.once(&seen, 8)
			v.Code = d.enum()
		case "parameter":
			d.once(&seen, 9)
			v.Parameter = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.EngineVerdict]())
		}
	}
}

func (d *decoder) findings() []engines.Finding {
	if d.null() {
		return nil
	}
	out := []engines.Finding{}
	d.array(func() {
		out = append(out, engines.Finding{})
		d.finding(&out[len(out)-1])
	})
	return out
}

func (d *decoder) finding(f *engines.Finding) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "rule":
			d.once(&seen, 0)
			f.Rule = d.enum()
		case "severity":
			d.once(&seen, 1)
			f.Severity = d.enum()
		case "message":
			d.once(&seen, 2)
			f.Message = d.str()
		case "line":
			d.once(&seen, 3)
			f.Line = d.int()
		case "column":
			d.once(&seen, 4)
			f.Column = d.int()
		case "snippet":
			d.once(&seen, 5)
			f.Snippet = d.str()
		default:
			d.unknown(k, reflect.TypeFor[engines.Finding]())
		}
	}
}

// error decodes an error; like is an error decoded before in the event
// (a decision's error mirrors the event's), whose strings it reuses.
func (d *decoder) error(e *domain.Error, like *domain.Error) {
	var seen uint64
	var message string
	if like != nil {
		message = like.Message
	}
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "code":
			d.once(&seen, 0)
			e.Code = domain.Code(d.enum())
		case "message":
			d.once(&seen, 1)
			e.Message = d.same(message)
		case "details":
			d.once(&seen, 2)
			e.Details = d.details()
		default:
			d.unknown(k, reflect.TypeFor[domain.Error]())
		}
	}
}

// details decodes an error's details (see anyValue for the form of their
// values). A denied decision's error mirrors the event's: when its details
// are the same bytes as the previous details of the event and those hold
// only strings, numbers, booleans and nulls (immutable once in an
// interface), the map is a copy of the previous one, sharing its values,
// instead of a second decoding.
func (d *decoder) details() domain.Details {
	if d.peek() != '{' {
		d.fail() // null or a type mismatch: the encoder omits empty details
		return nil
	}
	start := d.i
	if prev := d.prevDetails; prev.m != nil && bytes.HasPrefix(d.p[start:], d.p[prev.start:prev.end]) {
		d.i += prev.end - prev.start
		return maps.Clone(prev.m)
	}
	m := d.anyObject()
	d.prevDetails.m = nil
	if !d.failed && scalars(m) {
		d.prevDetails = detailsSpan{start: start, end: d.i, m: m}
	}
	return m
}

// detailsSpan is the last error details decoded: their bytes p[start:end]
// and their map, if it holds only scalars.
type detailsSpan struct {
	start, end int
	m          domain.Details
}

// scalars reports whether m's values are all strings, numbers, booleans
// or nulls.
func scalars(m domain.Details) bool {
	for _, v := range m {
		switch v.(type) {
		case nil, string, json.Number, bool:
		default:
			return false
		}
	}
	return true
}

func (d *decoder) agentRegistered(r *domain.AgentRegistered) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "agent_id":
			d.once(&seen, 0)
			r.AgentID = d.str()
		case "did":
			d.once(&seen, 1)
			r.DID = d.str()
		case "agent":
			d.once(&seen, 2)
			d.agentInfo(&r.Info)
		case "permissions":
			d.once(&seen, 3)
			d.permissions(&r.Permissions)
		case "budget":
			d.once(&seen, 4)
			d.limits(&r.Budget)
		case "trust_level":
			d.once(&seen, 5)
			r.TrustLevel = d.trustLevel()
		case "token_hash":
			d.once(&seen, 6)
			r.TokenHash = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.AgentRegistered]())
		}
	}
}

// actionDecided decodes a decision of the event ev (decoded so far), whose
// command's strings it reuses where the decision repeats them.
func (d *decoder) actionDecided(x *domain.ActionDecided, ev *domain.Event) {
	var seen uint64
	var conversation string
	if c := ev.Command; c != nil {
		switch {
		case c.Verify != nil:
			conversation = c.Verify.Context.ConversationID
		case c.Tool != nil && c.Tool.Context != nil:
			conversation = c.Tool.Context.ConversationID
		}
	}
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "action_id":
			d.once(&seen, 0)
			x.ActionID = d.str()
		case "kind":
			d.once(&seen, 1)
			x.Kind = domain.ActionKind(d.enum())
		case "action_type":
			d.once(&seen, 2)
			x.ActionType = d.enum()
		case "tool":
			d.once(&seen, 3)
			x.Tool = d.enum()
		case "decision":
			d.once(&seen, 4)
			x.Decision = domain.Decision(d.enum())
		case "verification":
			d.once(&seen, 5)
			if d.foldSkips() {
				continue
			}
			d.verification(&x.Verification)
		case "error":
			d.once(&seen, 6)
			if d.foldSkips() {
				continue
			}
			x.Error = takeOne(&d.slots.errs)
			d.error(x.Error, ev.Error)
		case "request_digest":
			d.once(&seen, 7)
			if d.foldSkips() {
				continue
			}
			x.RequestDigest = d.str()
		case "fingerprint":
			d.once(&seen, 8)
			x.Fingerprint = d.str()
		case "state_fingerprint":
			d.once(&seen, 9)
			x.StateFingerprint = d.str()
		case "conversation_id":
			d.once(&seen, 10)
			x.ConversationID = d.same(conversation)
		case "step":
			d.once(&seen, 11)
			x.Step = d.int64()
		case "step_consumed":
			d.once(&seen, 12)
			x.StepConsumed = d.bool()
		case "reserved_cost_usd":
			d.once(&seen, 13)
			x.ReservedCost = d.usd()
		case "reserved_tokens":
			d.once(&seen, 14)
			x.ReservedTokens = d.int64()
		case "high_risk":
			d.once(&seen, 15)
			x.HighRisk = d.bool()
		case "approval":
			d.once(&seen, 16)
			x.Approval = new(domain.Approval)
			d.approval(x.Approval, x.ActionID, ev.AgentID)
		case "attestation":
			d.once(&seen, 17)
			x.Attestation = d.str()
		case "trust":
			d.once(&seen, 18)
			x.Trust = new(domain.TrustChange)
			d.trustChange(x.Trust)
		case "security_violation":
			d.once(&seen, 19)
			x.SecurityViolation = d.bool()
		case "reset_recent":
			d.once(&seen, 20)
			x.ResetRecent = d.bool()
		case "reset_budget_denials":
			d.once(&seen, 21)
			x.ResetBudgetDenials = d.bool()
		case "conversation_evicted":
			d.once(&seen, 22)
			x.ConversationEvicted = d.str()
		case "budget_remaining":
			d.once(&seen, 23)
			if d.foldSkips() {
				continue
			}
			d.budgetRemaining(&x.Budget)
		case "outcome_digest":
			d.once(&seen, 24)
			if d.foldSkips() {
				continue
			}
			x.OutcomeDigest = d.str()
		case "corrected_action":
			d.once(&seen, 25)
			if d.foldSkips() {
				continue
			}
			x.CorrectedAction = new(domain.Action)
			d.action(x.CorrectedAction)
		case "corrected_digest":
			d.once(&seen, 26)
			if d.foldSkips() {
				continue
			}
			x.CorrectedDigest = d.str()
		case "notify":
			d.once(&seen, 27)
			x.Notify = new(domain.DecisionNotice)
			d.decisionNotice(x.Notify)
		default:
			d.unknown(k, reflect.TypeFor[domain.ActionDecided]())
		}
	}
}

func (d *decoder) verification(v *domain.Verification) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "status":
			d.once(&seen, 0)
			v.Status = d.enum()
		case "engine":
			d.once(&seen, 1)
			v.Engine = d.enum()
		case "risk_level":
			d.once(&seen, 2)
			v.RiskLevel = d.risk()
		case "risk_score":
			d.once(&seen, 3)
			v.RiskScore = d.enum()
		case "checks_passed":
			d.once(&seen, 4)
			v.ChecksPassed = d.strings()
		case "checks_failed":
			d.once(&seen, 5)
			v.ChecksFailed = d.strings()
		case "sandbox_required":
			d.once(&seen, 6)
			v.Sandbox = d.bool()
		case "findings":
			d.once(&seen, 7)
			v.Findings = d.findings()
		case "pii":
			d.once(&seen, 8)
			v.PII = d.piiFindings()
		default:
			d.unknown(k, reflect.TypeFor[domain.Verification]())
		}
	}
}

// piiFindings decodes a list of PII findings (null is nil, as
// encoding/json decodes it).
func (d *decoder) piiFindings() []domain.PIIFinding {
	if d.null() {
		return nil
	}
	out := []domain.PIIFinding{}
	d.array(func() {
		out = append(out, domain.PIIFinding{})
		f := &out[len(out)-1]
		var seen uint64
		d.openObject()
		for k := d.next(); k != nil; k = d.next() {
			switch string(k) {
			case "kind":
				d.once(&seen, 0)
				f.Kind = d.enum()
			case "location":
				d.once(&seen, 1)
				f.Location = d.str()
			case "offset":
				d.once(&seen, 2)
				f.Offset = d.int64()
			default:
				d.unknown(k, reflect.TypeFor[domain.PIIFinding]())
			}
		}
	})
	return out
}

// outputScan decodes an execution's output scan.
func (d *decoder) outputScan(s *domain.OutputScan) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "bytes":
			d.once(&seen, 0)
			s.Bytes = d.int64()
		case "sha256":
			d.once(&seen, 1)
			s.SHA256 = d.str()
		case "findings":
			d.once(&seen, 2)
			s.Findings = d.piiFindings()
		default:
			d.unknown(k, reflect.TypeFor[domain.OutputScan]())
		}
	}
}

func (d *decoder) budgetRemaining(b *domain.BudgetRemaining) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "daily_cost_usd":
			d.once(&seen, 0)
			b.DailyCost = takeOne(&d.slots.usd)
			*b.DailyCost = d.usd()
		case "hourly_requests":
			d.once(&seen, 1)
			b.HourlyRequests = d.int64Ptr()
		case "daily_requests":
			d.once(&seen, 2)
			b.DailyRequests = d.int64Ptr()
		case "daily_tokens":
			d.once(&seen, 3)
			b.DailyTokens = d.int64Ptr()
		case "hourly_tool_calls":
			d.once(&seen, 4)
			b.HourlyTools = d.int64Ptr()
		case "high_risk_calls":
			d.once(&seen, 5)
			b.HighRiskCalls = d.int64Ptr()
		default:
			d.unknown(k, reflect.TypeFor[domain.BudgetRemaining]())
		}
	}
}

// int64Ptr reads an integer into a new *int64 (a null fails).
func (d *decoder) int64Ptr() *int64 {
	p := takeOne(&d.slots.ints)
	*p = d.int64()
	return p
}

// approval decodes an approval; actionID and agentID are strings of the
// event it usually repeats.
func (d *decoder) approval(a *domain.Approval, actionID, agentID string) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "approval_id":
			d.once(&seen, 0)
			a.ID = d.same(actionID)
		case "agent_id":
			d.once(&seen, 1)
			a.AgentID = d.same(agentID)
		case "principal_id":
			d.once(&seen, 2)
			a.PrincipalID = d.str()
		case "kind":
			d.once(&seen, 3)
			a.Kind = d.enum()
		case "status":
			d.once(&seen, 4)
			a.Status = domain.ApprovalStatus(d.enum())
		case "summary":
			d.once(&seen, 5)
			a.Summary = d.str()
		case "risk_level":
			d.once(&seen, 6)
			a.Risk = d.risk()
		case "to_level":
			d.once(&seen, 7)
			t := d.trustLevel()
			a.ToLevel = &t
		case "created_at":
			d.once(&seen, 8)
			d.time(&a.CreatedAt)
		case "expires_at":
			d.once(&seen, 9)
			d.time(&a.ExpiresAt)
		case "resolved_at":
			d.once(&seen, 10)
			if d.peek() != '"' {
				d.fail() // the encoder omits a nil resolved_at: no null
				return
			}
			a.ResolvedAt = new(time.Time)
			d.time(a.ResolvedAt)
		case "resolved_by":
			d.once(&seen, 11)
			a.ResolvedBy = d.str()
		case "reason":
			d.once(&seen, 12)
			a.Reason = d.str()
		case "transaction_id":
			d.once(&seen, 13)
			a.TransactionID = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Approval]())
		}
	}
}

func (d *decoder) trustChange(t *domain.TrustChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "from":
			d.once(&seen, 0)
			t.From = d.trustLevel()
		case "to":
			d.once(&seen, 1)
			t.To = d.trustLevel()
		case "reason":
			d.once(&seen, 2)
			t.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.TrustChange]())
		}
	}
}

// executionLogged decodes an execution outcome; cmd is the event's command
// (its action ID is the outcome's).
func (d *decoder) executionLogged(x *domain.ExecutionLogged, cmd *domain.Command) {
	var seen uint64
	var actionID string
	if cmd != nil && cmd.Execution != nil {
		actionID = cmd.Execution.ActionID
	}
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "action_id":
			d.once(&seen, 0)
			x.ActionID = d.same(actionID)
		case "success":
			d.once(&seen, 1)
			x.Success = d.bool()
		case "cost_usd":
			d.once(&seen, 2)
			x.CostUSD = d.usd()
		case "tokens":
			d.once(&seen, 3)
			x.Tokens = d.int64()
		case "result_hash":
			d.once(&seen, 4)
			x.ResultHash = d.str()
		case "cost_delta_usd":
			d.once(&seen, 5)
			x.CostDelta = d.usd()
		case "tokens_delta":
			d.once(&seen, 6)
			x.TokensDelta = d.int64()
		case "same_day":
			d.once(&seen, 7)
			x.SameDay = d.bool()
		case "budget_remaining":
			d.once(&seen, 8)
			if d.foldSkips() {
				continue
			}
			d.budgetRemaining(&x.Budget)
		case "sandbox_violation":
			d.once(&seen, 9)
			x.SandboxViolation = d.bool()
		case "output_findings":
			d.once(&seen, 10)
			x.OutputFindings = d.piiFindings()
		case "pii_violation":
			d.once(&seen, 11)
			x.PIIViolation = d.bool()
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecutionLogged]())
		}
	}
}

func (d *decoder) elevationRequested(r *domain.TrustElevationRequested) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "request_id":
			d.once(&seen, 0)
			r.RequestID = d.str()
		case "claimed":
			d.once(&seen, 1)
			d.requestTrust(&r.Claimed)
		case "computed":
			d.once(&seen, 2)
			d.trustEvidence(&r.Computed)
		case "accepted":
			d.once(&seen, 3)
			r.Accepted = d.bool()
		case "reasons":
			d.once(&seen, 4)
			r.Reasons = d.strings()
		case "approval":
			d.once(&seen, 5)
			r.Approval = new(domain.Approval)
			d.approval(r.Approval, r.RequestID, "")
		default:
			d.unknown(k, reflect.TypeFor[domain.TrustElevationRequested]())
		}
	}
}

func (d *decoder) approvalResolved(r *domain.ApprovalResolved) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "approval":
			d.once(&seen, 0)
			d.approval(&r.Approval, "", "")
		case "trust":
			d.once(&seen, 1)
			r.Trust = new(domain.TrustChange)
			d.trustChange(r.Trust)
		case "released_cost_usd":
			d.once(&seen, 2)
			r.ReleasedCost = d.usd()
		case "released_tokens":
			d.once(&seen, 3)
			r.ReleasedTokens = d.int64()
		default:
			d.unknown(k, reflect.TypeFor[domain.ApprovalResolved]())
		}
	}
}

func (d *decoder) agentStatusChange(s *domain.AgentStatusChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "status":
			d.once(&seen, 0)
			s.Status = d.enum()
		case "reason":
			d.once(&seen, 1)
			s.Reason = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.AgentStatusChange]())
		}
	}
}

func (d *decoder) approvalsExpired(x *domain.ApprovalsExpired) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "approvals":
			d.once(&seen, 0)
			if d.null() {
				continue // nil, as it is
			}
			x.Approvals = []domain.ApprovalResolved{}
			d.array(func() {
				x.Approvals = append(x.Approvals, domain.ApprovalResolved{})
				d.approvalResolved(&x.Approvals[len(x.Approvals)-1])
			})
		default:
			d.unknown(k, reflect.TypeFor[domain.ApprovalsExpired]())
		}
	}
}

func (d *decoder) qwedVerified(q *domain.QWEDVerified) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "verification_id":
			d.once(&seen, 0)
			q.VerificationID = d.str()
		case "attestations":
			d.once(&seen, 1)
			q.Attestations = d.strings()
		default:
			d.unknown(k, reflect.TypeFor[domain.QWEDVerified]())
		}
	}
}

// logCheckpoint decodes a checkpoint; prev is its event's Prev, which is
// the checkpoint's head.
func (d *decoder) logCheckpoint(c *domain.LogCheckpoint, prev string) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "seq":
			d.once(&seen, 0)
			c.Seq = d.uint64()
		case "head":
			d.once(&seen, 1)
			c.Head = d.same(prev)
		case "next":
			d.once(&seen, 2)
			d.checkpointPolicy(&c.Next)
		case "signature":
			d.once(&seen, 3)
			c.Signature = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.LogCheckpoint]())
		}
	}
}

func (d *decoder) checkpointPolicy(p *domain.CheckpointPolicy) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "events":
			d.once(&seen, 0)
			p.Events = d.int64()
		case "interval":
			d.once(&seen, 1)
			p.Interval = d.duration()
		default:
			d.unknown(k, reflect.TypeFor[domain.CheckpointPolicy]())
		}
	}
}

func (d *decoder) a2aConfig(c *domain.A2AConfig) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "enable_financial_verification":
			d.once(&seen, 0)
			c.EnableFinancialVerification = d.bool()
		case "enable_logic_verification":
			d.once(&seen, 1)
			c.EnableLogicVerification = d.bool()
		case "enable_code_verification":
			d.once(&seen, 2)
			c.EnableCodeVerification = d.bool()
		case "block_on_error":
			d.once(&seen, 3)
			c.BlockOnError = d.bool()
		case "max_payload_size_bytes":
			d.once(&seen, 4)
			c.MaxPayloadSizeBytes = d.int64()
		case "rate_per_minute":
			d.once(&seen, 5)
			c.RatePerMinute = d.int64()
		case "burst":
			d.once(&seen, 6)
			c.Burst = d.int64()
		case "idle_evict":
			d.once(&seen, 7)
			c.IdleEvict = d.duration()
		case "default_allow":
			d.once(&seen, 8)
			c.DefaultAllow = d.bool()
		case "bypass_agents":
			d.once(&seen, 9)
			c.BypassAgents = d.strings()
		case "trusted_agents":
			d.once(&seen, 10)
			c.TrustedAgents = d.strings()
		default:
			d.unknown(k, reflect.TypeFor[domain.A2AConfig]())
		}
	}
}

func (d *decoder) a2aMessage(m *a2a.Message) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "sender_agent_id":
			d.once(&seen, 0)
			m.SenderAgentID = d.str()
		case "receiver_agent_id":
			d.once(&seen, 1)
			m.ReceiverAgentID = d.str()
		case "payload_type":
			d.once(&seen, 2)
			m.PayloadType = a2a.PayloadType(d.enum())
		case "payload":
			d.once(&seen, 3)
			m.Payload = d.rawMessage()
		case "timestamp":
			d.once(&seen, 4)
			m.Timestamp = d.str()
		case "trace_id":
			d.once(&seen, 5)
			m.TraceID = d.str()
		default:
			d.unknown(k, reflect.TypeFor[a2a.Message]())
		}
	}
}

func (d *decoder) a2aBoundary(c *domain.A2ABoundaryChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "op":
			d.once(&seen, 0)
			c.Op = d.enum()
		case "agent":
			d.once(&seen, 1)
			c.Agent = d.str()
		case "sender":
			d.once(&seen, 2)
			c.Sender = d.str()
		case "receiver":
			d.once(&seen, 3)
			c.Receiver = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.A2ABoundaryChange]())
		}
	}
}

func (d *decoder) a2aVerdict(v *domain.A2AVerdict) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "boundary":
			d.once(&seen, 0)
			v.Boundary = d.enum()
		case "sender":
			d.once(&seen, 1)
			v.Sender = d.str()
		case "receiver":
			d.once(&seen, 2)
			v.Receiver = d.str()
		case "payload_type":
			d.once(&seen, 3)
			v.PayloadType = a2a.PayloadType(d.enum())
		case "status":
			d.once(&seen, 4)
			v.Status = a2a.Status(d.enum())
		case "reason":
			d.once(&seen, 5)
			v.Reason = d.str()
		case "engine_used":
			d.once(&seen, 6)
			v.Engine = d.enum()
		case "trace_id":
			d.once(&seen, 7)
			v.TraceID = d.str()
		case "payload_digest":
			d.once(&seen, 8)
			v.PayloadDigest = d.str()
		case "attestation_jwt":
			d.once(&seen, 9)
			v.Attestation = d.str()
		case "retry_after_ms":
			d.once(&seen, 10)
			v.RetryAfterMs = d.int64()
		case "shadow":
			d.once(&seen, 11)
			v.Shadow = d.bool()
		case "details":
			d.once(&seen, 12)
			v.Details = new(domain.A2ADetails)
			d.a2aDetails(v.Details)
		default:
			d.unknown(k, reflect.TypeFor[domain.A2AVerdict]())
		}
	}
}

func (d *decoder) a2aDetails(x *domain.A2ADetails) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "claimed_total":
			d.once(&seen, 0)
			x.ClaimedTotal = d.str()
		case "computed_total":
			d.once(&seen, 1)
			x.ComputedTotal = d.str()
		case "contradictions":
			d.once(&seen, 2)
			x.Contradictions = d.strings()
		case "patterns":
			d.once(&seen, 3)
			x.Patterns = d.strings()
		case "findings":
			d.once(&seen, 4)
			x.Findings = d.findings()
		case "engine_error":
			d.once(&seen, 5)
			x.EngineError = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.A2ADetails]())
		}
	}
}

// ints reads an array of ints into a new slice (null: nil, []: empty).
func (d *decoder) ints() []int {
	if d.null() {
		return nil
	}
	d.expect('[')
	out := []int{}
	if d.peek() == ']' {
		d.i++
		return out
	}
	for !d.failed {
		out = append(out, d.int())
		if !d.more(']') {
			break
		}
	}
	if d.failed {
		return nil
	}
	return out
}
