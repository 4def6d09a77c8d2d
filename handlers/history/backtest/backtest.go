package backtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/streams"
)

// Named limits and defaults.
const (
	// DefaultMaxRows is the number of changed decisions a Result lists
	// when Options.MaxRows is zero; the totals always count them all.
	DefaultMaxRows = 10_000
	// MaxRows bounds Options.MaxRows.
	MaxRows = 1_000_000
)

// Options say what to backtest. Exactly one of AgentID and PrincipalID is
// set; the period is [From, To).
type Options struct {
	AgentID     string
	PrincipalID string
	From, To    time.Time
	Changes     Changes
	// Policies are the consumer policies changed at the period start
	// (policies.go).
	Policies PolicyChanges
	// MaxRows bounds Result.Decisions (0: DefaultMaxRows).
	MaxRows int
}

// Result is the outcome of a backtest. Its JSON form is the --json output.
type Result struct {
	AgentID     string    `json:"agent_id,omitempty"`
	PrincipalID string    `json:"principal_id,omitempty"`
	Period      Period    `json:"period"`
	Changes     []Setting `json:"changes"`
	// PolicyChanges are the consumer policies changed (nil: none).
	PolicyChanges *PolicyChanges `json:"policy_changes,omitempty"`
	// Agents are the selected agents, sorted.
	Agents []string `json:"agents"`
	// LogHead is the log's head when the backtest started: the records
	// after it are not read.
	LogHead uint64 `json:"log_head_seq"`
	Totals  Totals `json:"totals"`
	// Decisions lists, in log order, every re-decided command whose
	// outcome changed (at most MaxRows; Truncated says whether more did).
	Decisions []Row `json:"decisions"`
	Truncated bool  `json:"truncated"`
}

// Period is the backtested period, [From, To).
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Totals sum up a backtest.
type Totals struct {
	// Redecided counts the re-decided commands (decisions, execution
	// logs, approvals, trust commands, expiries); Changed those whose
	// outcome differs.
	Redecided int64 `json:"redecided"`
	Changed   int64 `json:"changed"`
	// Decisions counts the verify_action and tool-call decisions among
	// them, Recorded and Backtest by outcome.
	Decisions int64  `json:"decisions"`
	Recorded  Counts `json:"recorded"`
	Backtest  Counts `json:"backtest"`
	// Executes counts the executes among them (the Agent Policy Engine),
	// RecordedExecutes and BacktestExecutes by the status they decided
	// (executing, blocked, pending_approval, queued; "rejected" for a
	// refusal).
	Executes         int64            `json:"executes"`
	RecordedExecutes map[string]int64 `json:"recorded_executes"`
	BacktestExecutes map[string]int64 `json:"backtest_executes"`
	// Transitions counts the changed outcomes by (recorded, backtest),
	// sorted.
	Transitions []Transition `json:"transitions"`
}

// Counts are outcome counts of the decisions, and the cost and tokens
// they reserved (APPROVED, CORRECTED and PENDING reserve).
type Counts struct {
	Approved       int64      `json:"approved"`
	Denied         int64      `json:"denied"`
	Corrected      int64      `json:"corrected"`
	Pending        int64      `json:"pending"`
	BudgetExceeded int64      `json:"budget_exceeded"`
	Rejected       int64      `json:"rejected"`
	ReservedUSD    domain.USD `json:"reserved_cost_usd"`
	ReservedTokens int64      `json:"reserved_tokens"`
}

func (c *Counts) add(ev *domain.Event) {
	if ev.Type == domain.EvCommandRejected {
		c.Rejected++
		return
	}
	d := ev.Decided
	if d == nil {
		return
	}
	switch d.Decision {
	case domain.Approved:
		c.Approved++
	case domain.Denied:
		c.Denied++
	case domain.Corrected:
		c.Corrected++
	case domain.Pending:
		c.Pending++
	case domain.BudgetExceeded:
		c.BudgetExceeded++
	}
	c.ReservedUSD += d.ReservedCost
	c.ReservedTokens += d.ReservedTokens
}

// Transition counts the changed outcomes from one outcome to another.
type Transition struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int64  `json:"count"`
}

// Outcome is what a command produced: the event type, the decision of an
// action.decided event and the error code of a denial or rejection.
type Outcome struct {
	Event    domain.EventType `json:"event"`
	Decision domain.Decision  `json:"decision,omitempty"`
	Code     domain.Code      `json:"code,omitempty"`
	// Status is the transaction's status of an execute.decided or
	// execute.completed event.
	Status string `json:"status,omitempty"`
	// PolicyID is the policy that blocked, confirmed or queued it.
	PolicyID string `json:"policy_id,omitempty"`
}

// String renders the outcome as a table cell: the decision (or the event
// type) and the code.
func (o Outcome) String() string {
	s := string(o.Event)
	if o.Decision != "" {
		s = string(o.Decision)
	}
	if o.Status != "" {
		s = "execute " + o.Status
		if o.PolicyID != "" {
			s += " (policy " + o.PolicyID + ")"
		}
	}
	if o.Code != "" {
		s += " " + string(o.Code)
	}
	return s
}

func outcomeOf(ev *domain.Event) Outcome {
	if ev == nil {
		return Outcome{Event: "none"}
	}
	o := Outcome{Event: ev.Type}
	if ev.Decided != nil {
		o.Decision = ev.Decided.Decision
		if ev.Decided.Error != nil {
			o.Code = ev.Decided.Error.Code
		}
	}
	if ev.Error != nil && o.Code == "" {
		o.Code = ev.Error.Code
	}
	if t := ev.Transaction; t != nil {
		o.Status, o.PolicyID = t.Status, t.PolicyID
	}
	return o
}

// Row is one re-decided command whose outcome changed.
type Row struct {
	Seq      uint64             `json:"seq"`
	Time     time.Time          `json:"time"`
	AgentID  string             `json:"agent_id"`
	Command  domain.CommandType `json:"command"`
	ActionID string             `json:"action_id,omitempty"`
	// Action is the action type, or tool_call:<tool> for a tool call.
	Action   string  `json:"action,omitempty"`
	Recorded Outcome `json:"recorded"`
	Backtest Outcome `json:"backtest"`
	// TransactionID, BusinessID, AmountCents and Currency name the
	// transaction of an execute (its outcome, its approval).
	TransactionID string `json:"transaction_id,omitempty"`
	BusinessID    string `json:"business_id,omitempty"`
	AmountCents   int64  `json:"amount_cents,omitempty"`
	Currency      string `json:"currency,omitempty"`
	// Why is what the two decisions were made on: the agent's trust level
	// (in the log and in the backtest: a difference is the trust change
	// behind the changed decision) and the risk level of the action.
	Why Why `json:"why"`
}

// Why is the ground of a changed decision (see Row).
type Why struct {
	TrustRecorded domain.TrustLevel `json:"trust_recorded"`
	TrustBacktest domain.TrustLevel `json:"trust_backtest"`
	// Risk is the risk level of the re-decided action (the engines are
	// deterministic: the recorded decision's too), "" for a command that
	// decides no action.
	Risk domain.Risk `json:"risk_level,omitempty"`
}

// String renders w as a table cell: "trust autonomous -> supervised, risk
// medium" (one trust level when both sides agree).
func (w Why) String() string {
	pair := func(name, rec, bt string) string {
		if rec == bt {
			return name + " " + rec
		}
		return name + " " + rec + " -> " + bt
	}
	s := pair("trust", w.TrustRecorded.String(), w.TrustBacktest.String())
	if w.Risk != "" {
		s += ", risk " + string(w.Risk)
	}
	return s
}

// Run backtests log under opts. It reads the log and never writes it.
func Run(ctx context.Context, log streams.Log, opts Options) (*Result, error) {
	if (opts.AgentID == "") == (opts.PrincipalID == "") {
		return nil, errors.New("backtest: give exactly one of an agent and a principal")
	}
	if !opts.From.Before(opts.To) {
		return nil, errors.New("backtest: from must be before to")
	}
	if opts.MaxRows == 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.MaxRows < 0 || opts.MaxRows > MaxRows {
		return nil, fmt.Errorf("backtest: max rows must be between 1 and %d", MaxRows)
	}
	r := &runner{
		opts:     opts,
		st:       domain.NewState(),
		retired:  domain.NewRetiredSteps(),
		selected: map[string]bool{},
		res: &Result{
			AgentID: opts.AgentID, PrincipalID: opts.PrincipalID,
			Period:  Period{From: opts.From.UTC(), To: opts.To.UTC()},
			Changes: slices.Clone(opts.Changes.Settings), Decisions: []Row{},
		},
		transitions: map[[2]string]int64{},
		recTrust:    map[string]domain.TrustLevel{},
	}
	if r.res.Changes == nil {
		r.res.Changes = []Setting{}
	}
	if !opts.Policies.Empty() {
		pc := opts.Policies
		r.res.PolicyChanges = &pc
	}
	r.consumers = map[string]bool{}
	r.res.Totals.RecordedExecutes, r.res.Totals.BacktestExecutes = map[string]int64{}, map[string]int64{}
	r.res.LogHead = log.Head().Seq
	if opts.AgentID != "" {
		r.selected[opts.AgentID] = true
	} else if err := r.findAgents(ctx, log); err != nil {
		return nil, err
	}
	if err := r.run(ctx, log); err != nil {
		return nil, err
	}
	r.finish()
	return r.res, nil
}

// runner carries one backtest.
type runner struct {
	opts     Options
	st       *domain.State
	retired  *domain.RetiredSteps // conversations evicted from st (Env.RetiredStep)
	selected map[string]bool
	res      *Result
	// started is set once the period has begun (the changes are applied).
	started bool
	// nextDue is the earliest expiry of a pending approval the fold has
	// seen (zero: none), for the synthesized expiries.
	nextDue     time.Time
	transitions map[[2]string]int64
	// recTrust is each selected agent's trust level in the log, followed
	// through the recorded events (as domain.Apply changes it).
	recTrust map[string]domain.TrustLevel
	// consumers are those whose policies the changes were applied to.
	consumers map[string]bool
}

// agentNeedle precedes every agent ID in an encoded event.
var agentNeedle = []byte(`"agent_id":"`)

// globalNeedles mark the events that change every agent's decisions.
var globalNeedles = [][]byte{
	[]byte(`"type":"` + string(domain.EvConfigured) + `"`),
	[]byte(`"type":"` + string(domain.EvToolRegistrySet) + `"`),
	[]byte(`"type":"` + string(domain.EvPrincipalPermissionsSet) + `"`),
	// Executes decide on the business registry, the consumer's policies
	// and the execute ticks' releases.
	[]byte(`"type":"` + string(domain.EvBusinessChanged) + `"`),
	[]byte(`"type":"` + string(domain.EvPolicyChanged) + `"`),
	[]byte(`"type":"` + string(domain.EvExecuteTimers) + `"`),
}

// relevant reports whether an encoded event may concern a selected agent
// or every agent. It may answer true for an event that does not (the fold
// then skips it), never false for one that does.
func relevant(p []byte, selected map[string]bool) bool {
	rest := p
	for {
		i := bytes.Index(rest, agentNeedle)
		if i < 0 {
			break
		}
		rest = rest[i+len(agentNeedle):]
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			break
		}
		if selected[string(rest[:j])] {
			return true
		}
		rest = rest[j:]
	}
	for _, n := range globalNeedles {
		if bytes.Contains(p, n) {
			return true
		}
	}
	return false
}

// findAgents collects the agents registered under the principal.
func (r *runner) findAgents(ctx context.Context, log streams.Log) error {
	pj, err := json.Marshal(r.opts.PrincipalID)
	if err != nil {
		return fmt.Errorf("encoding principal: %w", err)
	}
	needle := append([]byte(`"principal_id":`), pj...)
	regType := []byte(`"type":"` + string(domain.EvAgentRegistered) + `"`)
	err = log.Read(ctx, 1, func(rec streams.Record) error {
		if !bytes.Contains(rec.Payload, needle) || !bytes.Contains(rec.Payload, regType) {
			return nil
		}
		ev, err := eventjson.DecodeEvent(rec.Payload)
		if err != nil {
			return fmt.Errorf("decoding log record %d: %w", rec.Seq, err)
		}
		if ev.Type == domain.EvAgentRegistered && ev.Registered != nil && ev.Registered.Info.PrincipalID == r.opts.PrincipalID {
			r.selected[ev.Registered.AgentID] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finding the principal's agents: %w", err)
	}
	return nil
}

// run reads the log, decoding the relevant records on every core ahead of
// the fold, which stays in log order on the caller's goroutine.
func (r *runner) run(ctx context.Context, log streams.Log) error {
	to := r.opts.To
	err := handlers.ReadDecoded(ctx, log, 1, func(p []byte) bool { return relevant(p, r.selected) },
		func(p []byte) (*domain.Event, error) { return decodeForRedecide(p, r.opts.From, r.selected) },
		func(_ streams.Record, ev *domain.Event, err error) error {
			if err != nil {
				return err
			}
			if !ev.Time.Before(to) {
				return handlers.ErrStopRead
			}
			r.fold(ev)
			return nil
		})
	if err != nil {
		return fmt.Errorf("re-deciding the recorded commands: %w", err)
	}
	if !r.started {
		r.start()
	}
	return nil
}

// start applies the changes to the selected agents known at the period
// start.
func (r *runner) start() {
	r.started = true
	ids := make([]string, 0, len(r.selected))
	for id := range r.selected {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	principals := map[string]bool{}
	for _, id := range ids {
		if a := r.st.Agents[id]; a != nil {
			r.opts.Changes.Apply(a)
			r.changePolicies(a.Info.PrincipalID)
			if !principals[a.Info.PrincipalID] {
				principals[a.Info.PrincipalID] = true
				r.opts.Changes.ApplyPrincipal(r.st, a.Info.PrincipalID)
			}
		}
	}
	if r.opts.PrincipalID != "" {
		r.changePolicies(r.opts.PrincipalID)
		if !principals[r.opts.PrincipalID] {
			r.opts.Changes.ApplyPrincipal(r.st, r.opts.PrincipalID)
		}
	}
}

// changePolicies applies the policy changes to consumer, once.
func (r *runner) changePolicies(consumer string) {
	if r.consumers[consumer] || r.opts.Policies.Empty() {
		return
	}
	r.consumers[consumer] = true
	r.opts.Policies.applyTo(r.st, consumer)
}

// unsigned is the signer of re-decided attestations: the backtest issues
// none (see the package doc).
type unsigned struct{}

// UnsignedAttestation is the attestation a backtest decision carries in
// place of a signed one.
const UnsignedAttestation = "backtest.unsigned"

func (unsigned) Sign(domain.AttestationClaims) (string, error) { return UnsignedAttestation, nil }

// noteTrust follows the recorded trust level of the agent ev changes, in
// the four ways domain.Apply changes one: registration, a trust change, a
// decision's degradation and a resolved (or expired) approval's.
func (r *runner) noteTrust(ev *domain.Event) {
	switch ev.Type {
	case domain.EvAgentRegistered:
		if ev.Registered != nil {
			r.recTrust[ev.Registered.AgentID] = ev.Registered.TrustLevel
		}
	case domain.EvTrustChanged:
		if ev.TrustChanged != nil {
			r.recTrust[ev.AgentID] = ev.TrustChanged.To
		}
	}
	if ev.Decided != nil && ev.Decided.Trust != nil {
		r.recTrust[ev.AgentID] = ev.Decided.Trust.To
	}
	resolved := func(a *domain.ApprovalResolved) {
		if a.Trust != nil {
			r.recTrust[a.Approval.AgentID] = a.Trust.To
		}
	}
	if ev.Resolved != nil {
		resolved(ev.Resolved)
	}
	if ev.Expired != nil {
		for i := range ev.Expired.Approvals {
			resolved(&ev.Expired.Approvals[i])
		}
	}
}

// fold handles one decoded relevant event.
func (r *runner) fold(ev *domain.Event) {
	defer r.noteTrust(ev) // after the decision: the trust it was made at
	if !r.started && !ev.Time.Before(r.opts.From) {
		r.start()
	}
	cmd := ev.Command
	concerns := r.selected[ev.AgentID] || (cmd != nil && r.selected[cmd.AgentID])
	if !r.started || cmd == nil || !concerns && cmd.Type != domain.CmdTick && cmd.Type != domain.CmdExecuteTick {
		r.apply(ev)
		return
	}
	switch cmd.Type {
	case domain.CmdRegisterAgent:
		r.apply(ev)
		if ev.Registered != nil && r.selected[ev.Registered.AgentID] {
			if a := r.st.Agents[ev.Registered.AgentID]; a != nil {
				r.opts.Changes.Apply(a)
				r.changePolicies(a.Info.PrincipalID)
			}
		}
		return
	case domain.CmdTick, domain.CmdExecuteTick:
		r.res.Totals.Redecided++
		r.apply(r.decide(ev))
		return
	}
	r.expire(ev.Time)
	why := Why{TrustRecorded: r.recTrust[cmd.AgentID]}
	if a := r.st.Agents[cmd.AgentID]; a != nil {
		why.TrustBacktest = a.Trust
	}
	got := r.decide(ev)
	r.res.Totals.Redecided++
	r.compare(ev, got, why)
	r.apply(got)
}

func (r *runner) decide(ev *domain.Event) *domain.Event {
	env := domain.Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition, Signer: unsigned{}, RetiredStep: r.retired.Step}
	return domain.Decide(r.st, env, ev.Command)
}

// apply folds ev into the state and tracks the earliest approval expiry.
func (r *runner) apply(ev *domain.Event) {
	if ev == nil {
		return
	}
	r.retired.Note(r.st, ev)
	domain.Apply(r.st, ev)
	var ap *domain.Approval
	switch {
	case ev.Decided != nil && ev.Decided.Approval != nil:
		ap = ev.Decided.Approval
	case ev.Elevation != nil && ev.Elevation.Approval != nil && ev.Elevation.Accepted:
		ap = ev.Elevation.Approval
	}
	if ap != nil && ap.Status == domain.ApprovalPending && (r.nextDue.IsZero() || ap.ExpiresAt.Before(r.nextDue)) {
		r.nextDue = ap.ExpiresAt
	}
}

// expire lets the approvals due more than a tick interval before now
// expire, as the live worker's tick would have.
func (r *runner) expire(now time.Time) {
	if r.nextDue.IsZero() || !now.After(r.nextDue.Add(handlers.TickInterval)) {
		return
	}
	at := r.nextDue.Add(handlers.TickInterval)
	tick := &domain.Command{Type: domain.CmdTick, Request: domain.RequestID{Source: "agentgate/backtest", ID: "tick"}, Tick: &domain.Tick{}}
	r.apply(domain.Decide(r.st, domain.Env{Now: at, Signer: unsigned{}}, tick))
	r.nextDue = time.Time{}
	for _, ap := range r.st.Approvals {
		if ap.Status == domain.ApprovalPending && r.selected[ap.AgentID] && (r.nextDue.IsZero() || ap.ExpiresAt.Before(r.nextDue)) {
			r.nextDue = ap.ExpiresAt
		}
	}
}

// compare counts a re-decided command and lists it when its outcome
// changed.
func (r *runner) compare(rec, got *domain.Event, why Why) {
	t := &r.res.Totals
	isDecision := rec.Command.Type == domain.CmdVerifyAction || rec.Command.Type == domain.CmdVerifyToolCall
	if isDecision {
		t.Decisions++
		t.Recorded.add(rec)
		if got != nil {
			t.Backtest.add(got)
		}
	}
	if rec.Command.Type == domain.CmdExecute {
		t.Executes++
		t.RecordedExecutes[executeStatus(rec)]++
		t.BacktestExecutes[executeStatus(got)]++
	}
	ro, bo := outcomeOf(rec), outcomeOf(got)
	if ro == bo {
		return
	}
	t.Changed++
	r.transitions[[2]string{ro.String(), bo.String()}]++
	if len(r.res.Decisions) >= r.opts.MaxRows {
		r.res.Truncated = true
		return
	}
	if got != nil && got.Decided != nil {
		why.Risk = got.Decided.Verification.RiskLevel
	}
	row := Row{Seq: rec.Seq, Time: rec.Time, AgentID: rec.AgentID, Command: rec.Command.Type, Recorded: ro, Backtest: bo, Why: why}
	if row.AgentID == "" && got != nil {
		row.AgentID = got.AgentID
	}
	if d := rec.Decided; d != nil {
		row.ActionID, row.Action = d.ActionID, d.ActionType
		if d.Kind == domain.KindTool {
			row.Action = "tool_call:" + d.Tool
		}
	} else if got != nil && got.Decided != nil {
		row.ActionID, row.Action = got.Decided.ActionID, got.Decided.ActionType
		if got.Decided.Kind == domain.KindTool {
			row.Action = "tool_call:" + got.Decided.Tool
		}
	}
	for _, ev := range []*domain.Event{got, rec} {
		if ev != nil && ev.Transaction != nil {
			tx := ev.Transaction
			row.TransactionID, row.BusinessID, row.AmountCents, row.Currency = tx.ID, tx.BusinessID, tx.AmountCents, tx.Currency
		}
	}
	r.res.Decisions = append(r.res.Decisions, row)
}

// executeStatus is the status an execute's event decided ("rejected" for
// a refusal, "none" without an event).
func executeStatus(ev *domain.Event) string {
	switch {
	case ev == nil:
		return "none"
	case ev.Transaction != nil:
		return ev.Transaction.Status
	}
	return "rejected"
}

// finish fills in the sorted summaries.
func (r *runner) finish() {
	for id := range r.selected {
		r.res.Agents = append(r.res.Agents, id)
	}
	slices.Sort(r.res.Agents)
	if r.res.Agents == nil {
		r.res.Agents = []string{}
	}
	tr := make([]Transition, 0, len(r.transitions))
	for k, n := range r.transitions {
		tr = append(tr, Transition{From: k[0], To: k[1], Count: n})
	}
	slices.SortFunc(tr, func(a, b Transition) int {
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	r.res.Totals.Transitions = tr
}
