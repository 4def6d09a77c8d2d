package projections

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
)

// The entities every decision writes (its activity, its open action, its
// conversation), the agent record's lists and the time-travel snapshots
// are stored in a compact binary form rather than JSON: they are most of
// the bytes the store writes, flushes and compacts, and JSON encoding was
// a tenth of the durable path's CPU. Every other value stays JSON. Each
// binary value starts with its format byte; the decoders are strict (no
// truncation, no trailing bytes) so that a value of another format is an
// error, never a wrong entity. Changing a form means a new storeFormat:
// a store of an older layout is rebuilt from the log.
const (
	fmtActivity = 0xA1
	// fmtActivityOutput is fmtActivity of an activity whose execution log
	// carried an output with findings: its execution's output section
	// follows the sandbox description. One without encodes as before.
	fmtActivityOutput = 0xA2
	fmtOpen           = 0xB2 // 0xB1 had no seq
	// fmtOpenSandbox is fmtOpen of an open action whose decision said
	// sandbox_required: one without it encodes as before the field.
	fmtOpenSandbox  = 0xB3
	fmtConversation = 0xC1
)

var errCorrupt = errors.New("malformed stored value")

// enc appends the primitives of the binary forms.
type enc []byte

func (e enc) str(s string) enc {
	e = binary.AppendUvarint(e, uint64(len(s)))
	return append(e, s...)
}

func (e enc) bytes(b []byte) enc {
	e = binary.AppendUvarint(e, uint64(len(b)))
	return append(e, b...)
}

func (e enc) int(v int64) enc { return binary.AppendVarint(e, v) }

func (e enc) uint(v uint64) enc { return binary.AppendUvarint(e, v) }

// time stores t as Unix seconds and nanoseconds: the domain's times are
// UTC and decode as UTC (the zero time included).
func (e enc) time(t time.Time) enc {
	return binary.AppendUvarint(binary.AppendVarint(e, t.Unix()), uint64(t.Nanosecond()))
}

// dec reads the primitives of the binary forms; the first error sticks.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *dec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) raw() []byte {
	n := d.uint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.raw()) }

// count reads the length of a list; every element takes a byte at least,
// so a corrupt length fails here instead of allocating.
func (d *dec) count() uint64 {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return n
}

func (d *dec) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) time() time.Time {
	sec, nsec := d.int(), d.uint()
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// done reports the first error, or errCorrupt when bytes are left over.
func (d *dec) done(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return fmt.Errorf("decoding %s: %w", what, d.err)
	}
	return nil
}

func newDec(v []byte, format byte) *dec {
	d := &dec{b: v}
	if d.byte() != format {
		d.fail()
	}
	return d
}

// Flags of an encoded activity.
const (
	actApproval = 1 << iota
	actResolved
	actExecution
	actSuccess
	actActual
	actSandboxed
	actSandboxViolation
	// actSandbox: the execution's sandbox description follows its
	// logged_at. The sandbox flags are never set on values written
	// before them, so those decode (and encode) unchanged.
	actSandbox
)

func encodeActivity(b []byte, a *Activity) ([]byte, error) {
	var errJSON, params []byte
	if len(a.Action.Parameters) > 0 {
		// As JSON stored them: compact and HTML-escaped, so that an
		// activity projected from the decided command and one projected
		// from the event read back from the log are the same bytes.
		var err error
		if params, err = json.Marshal(a.Action.Parameters); err != nil {
			return nil, fmt.Errorf("encoding the parameters of activity %s: %w", a.ActivityID, err)
		}
	}
	if a.Error != nil {
		// json.Marshal's bytes (what the JSON store held), without its
		// reflection: a denial's error is on most of a replay's events.
		var err error
		if errJSON, err = eventjson.AppendError(nil, a.Error); err != nil {
			return nil, fmt.Errorf("encoding the error of activity %s: %w", a.ActivityID, err)
		}
	}
	format := byte(fmtActivity)
	if x := a.Execution; x != nil && (x.PIIViolation || len(x.OutputFindings) > 0) {
		format = fmtActivityOutput
	}
	e := enc(append(b, format)).str(a.ActivityID).str(a.AgentID).time(a.Timestamp).uint(a.Seq).
		str(a.Action.Type).str(a.Action.Tool).str(a.Action.Query).str(a.Action.Target).bytes(params).
		str(a.Verification.Status).str(a.Verification.Engine).str(string(a.Verification.RiskLevel)).
		str(string(a.Decision)).bytes(errJSON).str(a.ConversationID).int(a.StepNumber)
	var flags byte
	if a.Approval != nil {
		flags |= actApproval
		if a.Approval.ResolvedAt != nil {
			flags |= actResolved
		}
	}
	if a.Execution != nil {
		flags |= actExecution
		if a.Execution.Success {
			flags |= actSuccess
		}
		if a.Execution.Sandboxed {
			flags |= actSandboxed
		}
		if a.Execution.SandboxViolation {
			flags |= actSandboxViolation
		}
		if a.Execution.Sandbox != "" {
			flags |= actSandbox
		}
	}
	if a.Cost.Actual {
		flags |= actActual
	}
	e = append(e, flags)
	if a.Approval != nil {
		e = e.str(a.Approval.ApprovalID).str(string(a.Approval.Status))
		if a.Approval.ResolvedAt != nil {
			e = e.time(*a.Approval.ResolvedAt)
		}
	}
	if a.Execution != nil {
		e = e.str(a.Execution.ResultHash).time(a.Execution.LoggedAt)
		if a.Execution.Sandbox != "" {
			e = e.str(a.Execution.Sandbox)
		}
		if format == fmtActivityOutput {
			e = encodeOutput(e, a.Execution)
		}
	}
	return e.int(int64(a.Cost.USD)).int(a.Cost.Tokens).str(a.AttestationID), nil
}

// encodeOutput writes an execution's output section: the violation flag
// and the findings.
func encodeOutput(e enc, x *ActivityExecution) enc {
	var flag byte
	if x.PIIViolation {
		flag = 1
	}
	e = append(e, flag)
	e = e.uint(uint64(len(x.OutputFindings)))
	for _, f := range x.OutputFindings {
		e = e.str(f.Kind).str(f.Location).int(f.Offset)
	}
	return e
}

// decodeOutput reads what encodeOutput wrote.
func decodeOutput(d *dec, x *ActivityExecution) {
	switch d.byte() {
	case 0:
	case 1:
		x.PIIViolation = true
	default:
		d.fail()
	}
	n := d.count()
	if n > 0 {
		x.OutputFindings = make([]domain.PIIFinding, n)
	}
	for i := range x.OutputFindings {
		x.OutputFindings[i] = domain.PIIFinding{Kind: d.str(), Location: d.str(), Offset: d.int()}
	}
}

func decodeActivity(v []byte, a *Activity) error {
	format := byte(fmtActivity)
	if len(v) > 0 && v[0] == fmtActivityOutput {
		format = fmtActivityOutput
	}
	d := newDec(v, format)
	*a = Activity{ActivityID: d.str(), AgentID: d.str(), Timestamp: d.time(), Seq: d.uint()}
	a.Action = ActivityAction{Type: d.str(), Tool: d.str(), Query: d.str(), Target: d.str()}
	a.ActionType = a.Action.Type
	if p := d.raw(); len(p) > 0 {
		a.Action.Parameters = json.RawMessage(append([]byte(nil), p...))
	}
	a.Verification = ActivityVerify{Status: d.str(), Engine: d.str(), RiskLevel: domain.Risk(d.str())}
	a.Decision = domain.Decision(d.str())
	if ej := d.raw(); len(ej) > 0 && d.err == nil {
		a.Error = new(domain.Error)
		if err := json.Unmarshal(ej, a.Error); err != nil {
			return fmt.Errorf("decoding the error of an activity: %w", err)
		}
	}
	a.ConversationID, a.StepNumber = d.str(), d.int()
	flags := d.byte()
	if flags&actApproval != 0 {
		a.Approval = &ActivityApproval{ApprovalID: d.str(), Status: domain.ApprovalStatus(d.str())}
		if flags&actResolved != 0 {
			t := d.time()
			a.Approval.ResolvedAt = &t
		}
	}
	if flags&actExecution != 0 {
		a.Execution = &ActivityExecution{Success: flags&actSuccess != 0, ResultHash: d.str(), LoggedAt: d.time(),
			Sandboxed: flags&actSandboxed != 0, SandboxViolation: flags&actSandboxViolation != 0}
		if flags&actSandbox != 0 {
			a.Execution.Sandbox = d.str()
		}
		if format == fmtActivityOutput {
			decodeOutput(d, a.Execution)
		}
	} else if format == fmtActivityOutput {
		d.fail()
	}
	a.Cost = ActivityCost{USD: domain.USD(d.int()), Tokens: d.int(), Actual: flags&actActual != 0}
	a.AttestationID = d.str()
	return d.done("activity")
}

func encodeOpen(b []byte, id string, oa *domain.OpenAction) []byte {
	format := byte(fmtOpen)
	if oa.SandboxRequired {
		format = fmtOpenSandbox
	}
	return enc(append(b, format)).str(id).uint(oa.Seq).int(oa.Day).int(int64(oa.ReservedCost)).int(oa.ReservedTokens).
		str(string(oa.Status)).time(oa.At)
}

func decodeOpen(v []byte) (string, *domain.OpenAction, error) {
	format := byte(fmtOpen)
	if len(v) > 0 && v[0] == fmtOpenSandbox {
		format = fmtOpenSandbox
	}
	d := newDec(v, format)
	id := d.str()
	oa := &domain.OpenAction{Seq: d.uint(), Day: d.int(), ReservedCost: domain.USD(d.int()), ReservedTokens: d.int(),
		Status: domain.Decision(d.str()), At: d.time(), SandboxRequired: format == fmtOpenSandbox}
	if err := d.done("open action"); err != nil {
		return "", nil, err
	}
	return id, oa, nil
}

// maxStoredWindow bounds the state window a stored conversation may claim
// (the domain keeps domain.DoomWindow).
const maxStoredWindow = 1 << 16

func encodeConversation(b []byte, c *domain.Conversation) []byte {
	e := enc(append(b, fmtConversation)).int(c.LastStep).str(c.LastFingerprint).int(c.Repeats).
		uint(uint64(len(c.StateWindow)))
	for _, s := range c.StateWindow {
		e = e.str(s)
	}
	return e.time(c.UpdatedAt)
}

func decodeConversation(v []byte) (*domain.Conversation, error) {
	d := newDec(v, fmtConversation)
	c := &domain.Conversation{LastStep: d.int(), LastFingerprint: d.str(), Repeats: d.int()}
	n := d.uint()
	if n > maxStoredWindow {
		d.fail()
	}
	if n > 0 && d.err == nil {
		c.StateWindow = make([]string, n)
		for i := range c.StateWindow {
			c.StateWindow[i] = d.str()
		}
	}
	c.UpdatedAt = d.time()
	if err := d.done("conversation"); err != nil {
		return nil, err
	}
	return c, nil
}

const fmtSnapshot = 0xD1

// Nil flags of an encoded snapshot's agent (a nil and an empty collection
// encode differently in JSON, which the time-travel API serves).
const (
	snapConvsNil = 1 << iota
	snapOpenNil
	snapOrderNil
)

// encodeSnapshot writes an agent snapshot: the agent record (encodeAgent)
// and its pending approvals as JSON, its conversations (by ID) and open actions
// (in OpenOrder, then by ID) in the binary forms above. A snapshot holds
// every entry of the agent; the maps were most of its JSON encoding cost.
func encodeSnapshot(b []byte, sn *AgentSnapshot) ([]byte, error) {
	a := sn.Agent
	cp := *a
	cp.Conversations, cp.OpenActions, cp.OpenOrder = nil, nil, nil
	agentRec, err := encodeAgent(nil, &cp)
	if err != nil {
		return nil, fmt.Errorf("encoding the snapshot of %s: %w", a.ID, err)
	}
	apJSON, err := json.Marshal(sn.Approvals)
	if err != nil {
		return nil, fmt.Errorf("encoding the approvals of the snapshot of %s: %w", a.ID, err)
	}
	var flags byte
	if a.Conversations == nil {
		flags |= snapConvsNil
	}
	if a.OpenActions == nil {
		flags |= snapOpenNil
	}
	if a.OpenOrder == nil {
		flags |= snapOrderNil
	}
	e := enc(append(b, fmtSnapshot)).uint(sn.Seq).time(sn.Time).bytes(agentRec).bytes(apJSON)
	e = append(e, flags)
	e = e.uint(uint64(len(a.Conversations)))
	for _, id := range sortedKeys(a.Conversations) {
		e = e.str(id).bytes(encodeConversation(nil, a.Conversations[id]))
	}
	e = e.uint(uint64(len(a.OpenOrder)))
	for _, id := range a.OpenOrder {
		e = e.str(id)
	}
	e = e.uint(uint64(len(a.OpenActions)))
	for _, id := range sortedKeys(a.OpenActions) {
		e = e.bytes(encodeOpen(nil, id, a.OpenActions[id]))
	}
	return e, nil
}

func decodeSnapshot(v []byte) (*AgentSnapshot, error) {
	d := newDec(v, fmtSnapshot)
	sn := &AgentSnapshot{Seq: d.uint(), Time: d.time(), Agent: new(domain.Agent)}
	agentRec, apJSON := d.raw(), d.raw()
	if d.err == nil {
		if err := decodeAgent(agentRec, sn.Agent); err != nil {
			return nil, fmt.Errorf("decoding snapshot agent: %w", err)
		}
		if err := json.Unmarshal(apJSON, &sn.Approvals); err != nil {
			return nil, fmt.Errorf("decoding snapshot approvals: %w", err)
		}
	}
	a := sn.Agent
	flags := d.byte()
	n := d.count()
	if flags&snapConvsNil == 0 {
		a.Conversations = make(map[string]*domain.Conversation, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		id, cv := d.str(), d.raw()
		if d.err != nil {
			break
		}
		c, err := decodeConversation(cv)
		if err != nil {
			return nil, err
		}
		if a.Conversations == nil {
			d.fail()
			break
		}
		a.Conversations[id] = c
	}
	n = d.count()
	if flags&snapOrderNil == 0 {
		a.OpenOrder = make([]string, 0, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		a.OpenOrder = append(a.OpenOrder, d.str())
	}
	n = d.count()
	if flags&snapOpenNil == 0 {
		a.OpenActions = make(map[string]*domain.OpenAction, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		ov := d.raw()
		if d.err != nil {
			break
		}
		id, oa, err := decodeOpen(ov)
		if err != nil {
			return nil, err
		}
		if a.OpenActions == nil {
			d.fail()
			break
		}
		a.OpenActions[id] = oa
	}
	if err := d.done("agent snapshot"); err != nil {
		return nil, err
	}
	return sn, nil
}

const fmtAgent = 0xE1

// Nil flags of an encoded agent's lists (nil and empty encode differently
// in JSON, which the API serves).
const (
	agentRecentNil = 1 << iota
	agentDenialsNil
	agentHourlyNil
	agentToolNil
	agentLoggedNil
)

// encodeAgent writes an agent record: its lists of times and IDs (the
// usage windows hold up to domain.MaxHourlyLimit times, written at every
// batch that touches the agent) in binary, the rest as JSON. The agent
// is written as given: the caller leaves out what has keys of its own.
func encodeAgent(b []byte, a *domain.Agent) ([]byte, error) {
	cp := *a
	cp.Recent, cp.BudgetDenials, cp.LoggedActions = nil, nil, nil
	cp.Usage.HourlyRequests, cp.Usage.HourlyToolCalls = nil, nil
	j, err := json.Marshal(&cp)
	if err != nil {
		return nil, fmt.Errorf("encoding agent %s: %w", a.ID, err)
	}
	// As in JSON: the lists JSON omits when empty (omitempty) decode as
	// nil when empty; the others keep nil apart from empty.
	var flags byte
	for i, isNil := range []bool{a.Recent == nil, a.BudgetDenials == nil, len(a.Usage.HourlyRequests) == 0,
		len(a.Usage.HourlyToolCalls) == 0, len(a.LoggedActions) == 0} {
		if isNil {
			flags |= 1 << i
		}
	}
	e := enc(append(b, fmtAgent)).bytes(j)
	e = append(e, flags)
	e = e.uint(uint64(len(a.Recent)))
	for _, r := range a.Recent {
		if r {
			e = append(e, 1)
		} else {
			e = append(e, 0)
		}
	}
	for _, ts := range [][]time.Time{a.BudgetDenials, a.Usage.HourlyRequests, a.Usage.HourlyToolCalls} {
		e = e.uint(uint64(len(ts)))
		for _, t := range ts {
			e = e.time(t)
		}
	}
	e = e.uint(uint64(len(a.LoggedActions)))
	for _, id := range a.LoggedActions {
		e = e.str(id)
	}
	return e, nil
}

// agentJSON returns the JSON part of an encoded agent record.
func agentJSON(v []byte) ([]byte, error) {
	d := newDec(v, fmtAgent)
	j := d.raw()
	if d.err != nil {
		return nil, fmt.Errorf("decoding agent: %w", d.err)
	}
	return j, nil
}

func decodeAgent(v []byte, a *domain.Agent) error {
	d := newDec(v, fmtAgent)
	j := d.raw()
	if d.err != nil {
		return fmt.Errorf("decoding agent: %w", d.err)
	}
	*a = domain.Agent{}
	if err := json.Unmarshal(j, a); err != nil {
		return fmt.Errorf("decoding agent: %w", err)
	}
	flags := d.byte()
	n := d.count()
	if flags&agentRecentNil == 0 {
		a.Recent = make([]bool, 0, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		switch d.byte() {
		case 0:
			a.Recent = append(a.Recent, false)
		case 1:
			a.Recent = append(a.Recent, true)
		default:
			d.fail()
		}
	}
	for i, dst := range []*[]time.Time{&a.BudgetDenials, &a.Usage.HourlyRequests, &a.Usage.HourlyToolCalls} {
		n := d.count()
		if flags&(agentDenialsNil<<i) == 0 {
			*dst = make([]time.Time, 0, n)
		}
		for j := uint64(0); j < n && d.err == nil; j++ {
			*dst = append(*dst, d.time())
		}
	}
	n = d.count()
	if flags&agentLoggedNil == 0 {
		a.LoggedActions = make([]string, 0, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		a.LoggedActions = append(a.LoggedActions, d.str())
	}
	return d.done("agent")
}
