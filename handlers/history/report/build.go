package report

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// Named limits.
const (
	// MaxDays bounds the days of one report (ten years).
	MaxDays = 3660
)

// ErrAgentNotFound is returned by Build when the log holds no
// registration of the agent up to the report's end.
var ErrAgentNotFound = errors.New("agent not registered in the log")

// Options say which report to build.
type Options struct {
	AgentID  string
	From, To time.Time
	// Partition is the log partition read (0 for the embedded log).
	Partition int32
}

// Own receives, in log order, the agent's own events up to ProducedAt
// (see IsOwn). The payload is valid only during the call.
type Own func(r streams.Record) error

// IsOwn reports whether ev is one of the agent's own events, those a
// report counts and a bundle holds in the clear: the events whose
// agent_id is the agent's, except refusals (command.rejected records a
// request that names the agent, whoever sent it). Events of several
// agents (approvals.expired) are nobody's own.
//
// A2A verdicts are not: the agent's own ones are those of IsOwnVerdict.
func IsOwn(ev *domain.Event, agentID string) bool {
	return ev.AgentID == agentID && ev.Type != domain.EvCommandRejected && ev.A2AVerdict == nil
}

// IsOwnVerdict reports whether ev is an A2A verdict on a message the
// agent sent under its principal's trust boundary: the verdicts a report
// counts and a bundle holds (tenant-scoped: the same sender id relayed
// under another principal's boundary is that principal's).
func IsOwnVerdict(ev *domain.Event, agentID, principal string) bool {
	v := ev.A2AVerdict
	return v != nil && v.Sender == agentID && v.Boundary == principal && ev.Type == domain.EvA2AVerdict
}

// Build reads log from its first record and builds the report of
// opts.AgentID over [opts.From, opts.To) from the agent's own events
// (IsOwn). When own is not nil it is handed each of them. Only the events
// that mention the agent are decoded.
func Build(ctx context.Context, log streams.Log, opts Options, own Own) (*Report, error) {
	b, err := run(ctx, log, opts, own, nil)
	if err != nil {
		return nil, err
	}
	return b.rep, nil
}

// run builds the report; at, when set, is the position the report is
// produced at instead of the one the log says (a bundle's recheck).
func run(ctx context.Context, log streams.Log, opts Options, own Own, at *Position) (*builder, error) {
	if opts.AgentID == "" {
		return nil, errors.New("building report: no agent")
	}
	if !opts.From.Before(opts.To) {
		return nil, errors.New("building report: from must be before to")
	}
	b := newBuilder(opts)
	b.at = at
	err := log.Read(ctx, 1, func(r streams.Record) error {
		if err := b.record(r, own); err != nil {
			return err
		}
		if b.done {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("reading log: %w", err)
	}
	if err := b.finish(); err != nil {
		return nil, err
	}
	return b, nil
}

var errStop = errors.New("report end reached")

// builder carries one Build.
type builder struct {
	opts   Options
	needle []byte
	// sender is in the bytes of the agent's A2A verdicts.
	sender []byte
	st     *domain.State
	rep    *Report
	// a2a counts the agent's A2A verdicts in the period.
	a2a projections.A2ATally
	// txs folds the agent's transactions.
	txs projections.TxTally
	// agentSeen is set once the agent's registration was folded.
	agentSeen bool
	// at replaces the position the log says (see run).
	at       *Position
	days     map[int64]*Day
	firstDay int64
	lastDay  int64
	// actions maps the period's admitted action IDs to their cost
	// entries, for the execution logs and approval outcomes that follow.
	actions map[string]*costEntry
	// exceptions maps the period's PENDING action IDs to their exception,
	// expires to their approval's expiry.
	exceptions map[string]int
	expires    map[string]time.Time
	// Position state.
	pastEnd    bool
	lastPeriod uint64
	done       bool
	last       rawRecord // the last record read (ProducedAt)
	lastCkpt   *Checkpoint
	ckptEvent  []byte // the bytes of lastCkpt's event
}

type rawRecord struct {
	seq     uint64
	time    time.Time
	payload []byte
}

// costEntry is an admitted action's cost as counted in its day.
type costEntry struct {
	day    int64
	usd    domain.USD
	tokens int64
}

func newBuilder(opts Options) *builder {
	id, _ := json.Marshal(opts.AgentID)
	return &builder{
		opts:       opts,
		needle:     append([]byte(`"agent_id":`), id...),
		sender:     append([]byte(`"sender":`), id...),
		st:         domain.NewState(),
		days:       map[int64]*Day{},
		actions:    map[string]*costEntry{},
		exceptions: map[string]int{},
		expires:    map[string]time.Time{},
		rep: &Report{
			Format:       FormatVersion,
			Period:       Period{From: opts.From.UTC(), To: opts.To.UTC()},
			Days:         []Day{},
			Trust:        []TrustChange{},
			Exceptions:   []Exception{},
			Attestations: []Attestation{},
		},
	}
}

var checkpointType = []byte(`"type":"` + string(domain.EvLogCheckpointed) + `"`)

// record handles one log record: the report's position, the checkpoints
// and, for the agent's own events, the fold.
func (b *builder) record(r streams.Record, own Own) error {
	t, err := eventTime(r.Payload)
	if err != nil {
		return fmt.Errorf("reading log record %d: %w", r.Seq, err)
	}
	isCkpt := bytes.Contains(r.Payload, checkpointType)
	if !isCkpt && !t.Before(b.opts.To) && b.lastCkpt != nil && b.lastCkpt.CoversSeq >= b.lastPeriod {
		// A signed checkpoint already covers every event of the period.
		b.done = true
		return nil
	}
	if t.Before(b.opts.To) {
		if !isCkpt {
			b.lastPeriod = r.Seq
		}
	} else {
		b.pastEnd = true
	}
	// The hash of the last record read is computed once, at the end,
	// from a copy of its payload (hashing every record would cost more).
	b.last.seq, b.last.time = r.Seq, t
	b.last.payload = append(b.last.payload[:0], r.Payload...)
	if isCkpt {
		if err := b.checkpoint(r); err != nil {
			return err
		}
		if b.pastEnd && b.lastCkpt != nil && b.lastCkpt.CoversSeq >= b.lastPeriod {
			b.done = true
			return nil
		}
	}
	if bytes.Contains(r.Payload, b.needle) || bytes.Contains(r.Payload, b.sender) {
		ev, err := eventjson.DecodeEvent(r.Payload)
		if err != nil {
			return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
		}
		if ev.A2AVerdict != nil {
			return b.verdict(r, ev, own)
		}
		if !IsOwn(ev, b.opts.AgentID) {
			return nil
		}
		if own != nil {
			if err := own(r); err != nil {
				return err
			}
		}
		b.fold(ev)
	}
	return nil
}

// verdict counts an A2A verdict of the agent's (IsOwnVerdict, once the
// agent is registered: its principal names the boundary) in the period.
func (b *builder) verdict(r streams.Record, ev *domain.Event, own Own) error {
	a := b.st.Agents[b.opts.AgentID]
	if a == nil || !IsOwnVerdict(ev, b.opts.AgentID, a.Info.PrincipalID) {
		return nil
	}
	if own != nil {
		if err := own(r); err != nil {
			return err
		}
	}
	if t := ev.Time.UTC(); !t.Before(b.opts.From) && t.Before(b.opts.To) {
		b.a2a.Add(ev)
	}
	return nil
}

// a2aSection renders the verdicts counted (nil when none).
func (b *builder) a2aSection() *A2A {
	if len(b.a2a.Boundaries) == 0 {
		return nil
	}
	// One boundary: the agent's principal's.
	var c *projections.A2ACounts
	var pairs map[[2]string]*projections.StatusCounts
	for k := range b.a2a.Boundaries {
		c, pairs = b.a2a.Boundaries[k], b.a2a.PairCounts[k]
	}
	out := &A2A{StatusCounts: c.StatusCounts, Total: c.Total(), OtherPairs: c.Other,
		ByEngine: make([]A2AEngine, 0, len(c.ByEngine)), Pairs: make([]projections.A2APair, 0, len(pairs))}
	for _, e := range slices.Sorted(maps.Keys(c.ByEngine)) {
		out.ByEngine = append(out.ByEngine, A2AEngine{Engine: e, StatusCounts: c.ByEngine[e]})
	}
	for _, k := range slices.SortedFunc(maps.Keys(pairs), func(x, y [2]string) int {
		if c := strings.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return strings.Compare(x[1], y[1])
	}) {
		out.Pairs = append(out.Pairs, projections.A2APair{Sender: k[0], Receiver: k[1], StatusCounts: *pairs[k]})
	}
	return out
}

// eventTime reads the time of an encoded event from its leading fields
// (the gate encodes seq, prev, partition, time first), decoding the
// whole event only when they are laid out otherwise.
func eventTime(p []byte) (time.Time, error) {
	const key = `"time":"`
	if i := bytes.Index(p, []byte(key)); i >= 0 && i < 160 {
		rest := p[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			if t, err := time.Parse(time.RFC3339Nano, string(rest[:j])); err == nil {
				return t.UTC(), nil
			}
		}
	}
	var ev struct {
		Time time.Time `json:"time"`
	}
	if err := json.Unmarshal(p, &ev); err != nil {
		return time.Time{}, err
	}
	return ev.Time.UTC(), nil
}

// checkpoint records a checkpoint event.
func (b *builder) checkpoint(r streams.Record) error {
	ev, err := eventjson.DecodeEvent(r.Payload)
	if err != nil {
		return fmt.Errorf("decoding log record %d: %w", r.Seq, err)
	}
	if ev.Type != domain.EvLogCheckpointed || ev.Checkpoint == nil {
		return nil
	}
	b.lastCkpt = &Checkpoint{
		EventSeq: ev.Seq, CoversSeq: ev.Checkpoint.Seq, Head: ev.Checkpoint.Head, Time: ev.Time.UTC(),
		KeyID: tokenKID(ev.Checkpoint.Signature),
	}
	b.ckptEvent = append(b.ckptEvent[:0], r.Payload...)
	return nil
}

// tokenKID returns the kid of a compact JWS header ("" when unreadable).
func tokenKID(tok string) string {
	h, _, ok := strings.Cut(tok, ".")
	if !ok {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return ""
	}
	var hdr struct {
		KID string `json:"kid"`
	}
	if json.Unmarshal(raw, &hdr) != nil {
		return ""
	}
	return hdr.KID
}

// fold applies one event that mentions the agent.
func (b *builder) fold(ev *domain.Event) {
	id := b.opts.AgentID
	t := ev.Time.UTC()
	inPeriod := !t.Before(b.opts.From) && t.Before(b.opts.To)
	a := b.st.Agents[id]
	var before domain.TrustLevel
	if a != nil {
		before = a.Trust
	}
	domain.Apply(b.st, ev)
	b.txs.Add(ev)
	a = b.st.Agents[id]
	if a == nil {
		// Before the agent's registration (a bundle whose registration
		// was removed): only what the events themselves say is counted.
		b.count(ev, nil, inPeriod)
		return
	}
	if !b.agentSeen {
		b.agentSeen = true
		b.rep.TrustAtStart = a.Trust
	} else if a.Trust != before {
		if inPeriod {
			b.rep.Trust = append(b.rep.Trust, TrustChange{Seq: ev.Seq, Time: t, From: before, To: a.Trust, Reason: trustReason(ev)})
		} else if t.Before(b.opts.From) {
			b.rep.TrustAtStart = a.Trust
		}
	}
	b.count(ev, a, inPeriod)
	if inPeriod {
		if d := b.days[dayOf(t)]; d != nil {
			d.Budget = budgetOf(a, t)
		}
	}
}

// count records the decisions, costs, exceptions and attestations of ev;
// a is the agent's state after it (nil when unknown).
func (b *builder) count(ev *domain.Event, a *domain.Agent, inPeriod bool) {
	id := b.opts.AgentID
	switch {
	case ev.Decided != nil && ev.AgentID == id && inPeriod:
		b.decided(ev, a)
	case ev.Executed != nil && ev.AgentID == id:
		if c := b.actions[ev.Executed.ActionID]; c != nil {
			b.recost(c, ev.Executed.CostUSD, ev.Executed.Tokens)
		}
		if ev.Executed.SandboxViolation && inPeriod {
			b.rep.SandboxViolations = append(b.rep.SandboxViolations,
				SandboxViolation{Seq: ev.Seq, Time: ev.Time.UTC(), ActionID: ev.Executed.ActionID})
		}
		if ev.Executed.PIIViolation && inPeriod {
			v := PIIViolation{Seq: ev.Seq, Time: ev.Time.UTC(), ActionID: ev.Executed.ActionID, Kinds: []string{}}
			for _, f := range ev.Executed.OutputFindings {
				if !slices.Contains(v.Kinds, f.Kind) {
					v.Kinds = append(v.Kinds, f.Kind)
				}
			}
			b.rep.PIIViolations = append(b.rep.PIIViolations, v)
		}
	case ev.Resolved != nil:
		b.resolved(&ev.Resolved.Approval)
	}
}

func trustReason(ev *domain.Event) string {
	switch {
	case ev.Decided != nil && ev.Decided.Trust != nil:
		return ev.Decided.Trust.Reason
	case ev.TrustChanged != nil:
		return ev.TrustChanged.Reason
	case ev.Resolved != nil && ev.Resolved.Trust != nil:
		return ev.Resolved.Trust.Reason
	case ev.Expired != nil:
		for _, r := range ev.Expired.Approvals {
			if r.Trust != nil {
				return r.Trust.Reason
			}
		}
	}
	return string(ev.Type)
}

func dayOf(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d--
	}
	return d
}

func budgetOf(a *domain.Agent, t time.Time) BudgetDay {
	bd := BudgetDay{
		MaxDailyCostUSD: a.Budget.MaxDailyCost, MaxRequests: a.Budget.MaxRequestsPerDay,
		MaxTokens: a.Budget.MaxDailyTokens, MaxHighRisk: a.Budget.MaxHighRiskCallsDay,
	}
	if u := a.Usage; u.Day == dayOf(t) {
		bd.CostUSD, bd.Requests, bd.Tokens, bd.HighRiskCalls = u.DailyCost, u.DailyRequests, u.DailyTokens, u.DailyHighRisk
	}
	return bd
}

// day returns the day entry of t, creating it.
func (b *builder) day(t time.Time) *Day {
	n := dayOf(t)
	d := b.days[n]
	if d == nil {
		d = &Day{Date: t.Format(time.DateOnly)}
		b.days[n] = d
		if len(b.days) == 1 || n < b.firstDay {
			b.firstDay = n
		}
		if len(b.days) == 1 || n > b.lastDay {
			b.lastDay = n
		}
	}
	return d
}

func (b *builder) decided(ev *domain.Event, a *domain.Agent) {
	dec := ev.Decided
	t := ev.Time.UTC()
	d := b.day(t)
	d.Count(dec.Decision, projections.ActivityCost{USD: dec.ReservedCost, Tokens: dec.ReservedTokens})
	if dec.ReservedCost != 0 || dec.ReservedTokens != 0 || dec.Decision == domain.Approved ||
		dec.Decision == domain.Corrected || dec.Decision == domain.Pending {
		b.actions[dec.ActionID] = &costEntry{day: dayOf(t), usd: dec.ReservedCost, tokens: dec.ReservedTokens}
	}
	action := dec.ActionType
	if dec.Kind == domain.KindTool {
		action = "tool_call:" + dec.Tool
	}
	switch dec.Decision {
	case domain.Denied, domain.BudgetExceeded, domain.Pending:
		x := Exception{Seq: ev.Seq, Time: t, ActionID: dec.ActionID, Action: action, Risk: dec.Verification.RiskLevel, Decision: dec.Decision}
		if dec.Error != nil {
			x.Code, x.Message = dec.Error.Code, dec.Error.Message
		}
		if dec.Approval != nil {
			x.Approval = dec.Approval.Status
			b.exceptions[dec.Approval.ID] = len(b.rep.Exceptions)
			b.expires[dec.ActionID] = dec.Approval.ExpiresAt
		}
		b.rep.Exceptions = append(b.rep.Exceptions, x)
	}
	if dec.Attestation != "" {
		b.rep.Attestations = append(b.rep.Attestations, Attestation{
			Seq: ev.Seq, Time: t, ActionID: dec.ActionID, Decision: dec.Decision,
			KeyID: tokenKID(dec.Attestation), Token: dec.Attestation,
		})
	}
	if a != nil {
		d.Budget = budgetOf(a, t)
	}
}

// recost replaces an action's counted cost.
func (b *builder) recost(c *costEntry, usd domain.USD, tokens int64) {
	if d := b.days[c.day]; d != nil {
		d.Recost(projections.ActivityCost{USD: c.usd, Tokens: c.tokens}, projections.ActivityCost{USD: usd, Tokens: tokens})
	}
	c.usd, c.tokens = usd, tokens
}

// resolved records an approval's outcome on its exception and releases
// the cost of a refused one.
func (b *builder) resolved(ap *domain.Approval) {
	i, ok := b.exceptions[ap.ID]
	if !ok {
		return
	}
	b.rep.Exceptions[i].Approval = ap.Status
	if ap.Status != domain.ApprovalApproved {
		if c := b.actions[ap.ID]; c != nil {
			b.recost(c, 0, 0)
		}
	}
}

// finish assembles the report.
func (b *builder) finish() error {
	a := b.st.Agents[b.opts.AgentID]
	if a == nil {
		return fmt.Errorf("building report of %s: %w", b.opts.AgentID, ErrAgentNotFound)
	}
	rep := b.rep
	rep.Agent = Agent{
		AgentID: a.ID, DID: a.DID, Name: a.Info.Name, Type: a.Info.Type, PrincipalID: a.Info.PrincipalID,
		Status: a.Status, RegisteredAt: a.CreatedAt.UTC(),
	}
	rep.Limits = a.Budget
	rep.ProducedAt = Position{Partition: b.opts.Partition, Seq: b.last.seq, Time: b.last.time}
	if b.last.seq > 0 {
		rep.ProducedAt.Hash = streams.HashPayload(b.last.payload)
	}
	if c := b.lastCkpt; c != nil && c.EventSeq == b.last.seq && c.CoversSeq >= b.lastPeriod {
		// The log ends with the checkpoint that covers
		// the period.
		b.done = true
	}
	if c := b.lastCkpt; c != nil {
		cp := *c
		rep.ProducedAt.Checkpoint = &cp
		if b.done {
			// The report ends at the checkpoint that covers the period.
			rep.ProducedAt.Seq, rep.ProducedAt.Hash, rep.ProducedAt.Time = c.CoversSeq, c.Head, c.Time
		}
	}
	if b.at != nil {
		rep.ProducedAt = *b.at
	}
	b.expire(rep.ProducedAt.Time)
	if len(b.days) > 0 {
		if b.lastDay-b.firstDay+1 > MaxDays {
			return fmt.Errorf("building report: the agent's actions span %d days, more than %d", b.lastDay-b.firstDay+1, MaxDays)
		}
		prev := BudgetDay{MaxDailyCostUSD: a.Budget.MaxDailyCost, MaxRequests: a.Budget.MaxRequestsPerDay,
			MaxTokens: a.Budget.MaxDailyTokens, MaxHighRisk: a.Budget.MaxHighRiskCallsDay}
		for n := b.firstDay; n <= b.lastDay; n++ {
			d := b.days[n]
			if d == nil {
				d = &Day{Date: time.Unix(n*86400, 0).UTC().Format(time.DateOnly)}
				d.Budget = BudgetDay{MaxDailyCostUSD: prev.MaxDailyCostUSD, MaxRequests: prev.MaxRequests,
					MaxTokens: prev.MaxTokens, MaxHighRisk: prev.MaxHighRisk}
			}
			prev = d.Budget
			d.DenialRate = rate(d.Denied+d.BudgetExceeded, d.TotalActions)
			rep.Days = append(rep.Days, *d)
			rep.Summary.Add(d.Summary.Summary)
		}
	}
	rep.Summary.DenialRate = rate(rep.Summary.Denied+rep.Summary.BudgetExceeded, rep.Summary.TotalActions)
	rep.A2A = b.a2aSection()
	rep.Transactions = b.txSection()
	return nil
}

// txSection renders the agent's transactions decided in the period (nil
// when none).
func (b *builder) txSection() *Transactions {
	var out *Transactions
	for _, t := range b.txs.All() {
		if t.AgentID != b.opts.AgentID || t.CreatedAt.Before(b.opts.From) || !t.CreatedAt.Before(b.opts.To) {
			continue
		}
		if out == nil {
			out = &Transactions{List: []projections.Transaction{}}
		}
		out.Totals.Add(t)
		if len(out.List) == MaxReportTransactions {
			out.Truncated = true
			continue
		}
		out.List = append(out.List, *t)
	}
	return out
}

// expire marks expired the approvals still pending at time at whose
// expiry has passed, as a Tick at that time would (domain: an approval
// expires once now is not before ExpiresAt), and releases their cost.
// The approvals.expired event that records it holds the approvals of
// every agent that expired at that tick, so it is no agent's own event:
// its outcome is derived from the agent's own events instead, the same
// way by the gate and by a bundle's verifier.
func (b *builder) expire(at time.Time) {
	for i := range b.rep.Exceptions {
		x := &b.rep.Exceptions[i]
		exp, ok := b.expires[x.ActionID]
		if !ok || x.Approval != domain.ApprovalPending || at.Before(exp) {
			continue
		}
		x.Approval = domain.ApprovalExpired
		if c := b.actions[x.ActionID]; c != nil {
			b.recost(c, 0, 0)
		}
	}
}

// rate renders n/d with four decimals, rounded half up, in integers.
func rate(n, d int64) string {
	if d == 0 {
		return "0.0000"
	}
	q := (n*20000/d + 1) / 2 // ten-thousandths, half up
	return strconv.FormatInt(q/10000, 10) + "." + fmt.Sprintf("%04d", q%10000)
}
