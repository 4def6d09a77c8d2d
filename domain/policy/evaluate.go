package policy

import (
	"strconv"
	"strings"
	"time"
)

// Verdict is what a policy, or the consumer's policies together, say of an
// execute.
type Verdict string

// The verdicts, from the strongest: an execute's outcome is the strongest
// verdict of its enforced policies (block > confirm > queue > pass);
// notify is a finding's only (the execute proceeds, the consumer is told).
const (
	Block   Verdict = "block"
	Confirm Verdict = "confirm"
	Queue   Verdict = "queue"
	Notify  Verdict = "notify"
	Pass    Verdict = "pass"
)

func (v Verdict) rank() int {
	switch v {
	case Block:
		return 4
	case Confirm:
		return 3
	case Queue:
		return 2
	case Notify:
		return 1
	}
	return 0
}

// The kinds of Notice.
const (
	NoticeBlocked       = "blocked"
	NoticeConfirmNeeded = "confirm_needed"
	NoticeQueued        = "queued"
	// NoticeLimit80 is sent for the execute that takes a rolling total
	// from below 80 % of its limit to 80 % or more (not over it).
	NoticeLimit80 = "limit_80"
	// NoticeLimitExceeded is sent for an execute over a spending limit
	// whose on_exceed is notify.
	NoticeLimitExceeded = "limit_exceeded"
)

// Input is one execute as the policies see it.
type Input struct {
	// Now is the decision time (the event's time).
	Now time.Time
	// AgentID is the executing agent; BusinessID the business it calls.
	AgentID, BusinessID string
	// Categories are the business's categories from the registry.
	Categories []string
	// AmountCents is the execute's amount in the minor units of the
	// business's currency (0 when it names none; a negative amount counts
	// as 0).
	AmountCents int64
	// FirstTime says the agent has not dealt with the business before.
	FirstTime bool
}

// Finding is one policy's verdict on an execute when it is not pass:
// recorded in the transaction, shadow policies' included ("would have
// blocked").
type Finding struct {
	PolicyID string  `json:"policy_id"`
	Version  int64   `json:"version,omitempty"`
	Type     Type    `json:"type"`
	Verdict  Verdict `json:"verdict"`
	// Shadow says the policy is in shadow mode: its verdict was recorded,
	// not enforced.
	Shadow bool `json:"shadow,omitempty"`
	// Code is the QWED-POLICY code of a block ("" otherwise).
	Code string `json:"code,omitempty"`
	// Limit is the limit hit, as people read it ("daily 1000 cents").
	Limit   string `json:"limit,omitempty"`
	Message string `json:"message"`
}

// Notice is what the consumer is told of an execute (the notify runner
// delivers it to their webhooks).
type Notice struct {
	Kind     string `json:"kind"`
	PolicyID string `json:"policy_id,omitempty"`
	Message  string `json:"message"`
}

// Outcome is the consumer's policies' decision on one execute.
type Outcome struct {
	Verdict Verdict
	// PolicyID, Code, Limit and Message are the deciding policy's when the
	// verdict is not pass: the first policy (by id) with the strongest
	// verdict.
	PolicyID string
	Code     string
	Limit    string
	Message  string
	// ReleaseAt is when a queued execute may proceed: the earliest instant
	// at which every queueing window is open. It is set under a confirm
	// verdict too when a queueing window is closed: the approved execute
	// then waits for it.
	ReleaseAt time.Time
	// Findings are the verdicts that are not pass, in policy order.
	Findings []Finding
	// Notices are the verdict's notice first (blocked, confirm_needed,
	// queued), then limit_exceeded and limit_80 notices in policy order;
	// limit_80 only when the execute is not blocked (a blocked execute
	// spends nothing).
	Notices []Notice
}

// applies reports whether p's scope holds the execute.
func (p *Policy) applies(in *Input) bool {
	if p.Scope.BusinessID != "" && p.Scope.BusinessID != in.BusinessID {
		return false
	}
	return p.Scope.Agents == nil || contains(p.Scope.Agents, in.AgentID)
}

// typeIndex numbers the four types for the override table.
func typeIndex(t Type) int {
	switch t {
	case TypeSpending:
		return 0
	case TypeCategory:
		return 1
	case TypeConfirmation:
		return 2
	}
	return 3
}

// Evaluate decides one execute against a consumer's policies (set, nil
// for none) and rolling spend (ledger, nil for none; the execute's own
// amount is not in it yet). It is a pure function of its arguments.
//
// Precedence. Every policy whose scope holds the execute (its agents, or
// all; its business, or all) is evaluated. An override policy (enforced,
// for the execute's business) replaces, for that execute, every policy of
// its type that is not an override: those are not evaluated (shadow ones
// still are, recorded only). Overrides and non-overridden policies all
// apply together, so several limits of one kind stack (the tightest
// wins), and an override can raise a limit (it replaces the global one at
// its business) or lower it. Spend at a business with an override still
// counts in the totals of the global policies (they cap the consumer's
// money at every other business). Shadow policies add findings only,
// never a verdict or a notice. The verdict is the strongest of the
// enforced policies' (block > confirm > queue > pass); queue windows of
// several policies release when all are open; when they never are within
// eight days the execute is blocked (QWED-POLICY-003).
func Evaluate(set *Set, ledger *Ledger, in Input) Outcome {
	out := Outcome{Verdict: Pass}
	if set.Len() == 0 {
		return out
	}
	if in.AmountCents < 0 {
		in.AmountCents = 0
	}
	var overridden [4]bool
	for i := range set.Policies {
		p := &set.Policies[i]
		if p.Override && !p.Shadow && p.applies(&in) {
			overridden[typeIndex(p.Type)] = true
		}
	}
	best := -1 // index in out.Findings of the deciding finding
	var queued []zoned
	var later []Notice // limit_exceeded and limit_80
	var totals totalsCache
	for i := range set.Policies {
		p := &set.Policies[i]
		if !p.applies(&in) || !p.Shadow && !p.Override && overridden[typeIndex(p.Type)] {
			continue
		}
		f := Finding{PolicyID: p.ID, Version: p.Version, Type: p.Type, Verdict: Pass, Shadow: p.Shadow}
		switch p.Type {
		case TypeSpending:
			var near []Notice
			f, near = spending(p, ledger, &totals, &in, f)
			if !p.Shadow {
				later = append(later, near...)
			}
		case TypeCategory:
			f = category(p, &in, f)
		case TypeConfirmation:
			f = confirmation(p, &in, f)
		case TypeTimeWindow:
			var z zoned
			f, z = timeWindow(p, &in, f)
			if f.Verdict == Queue && !p.Shadow {
				queued = append(queued, z)
			}
		}
		if f.Verdict == Pass {
			continue
		}
		if p.Shadow {
			f.Message = "would have " + wouldHave(f.Verdict) + ": " + f.Message
		} else if f.Verdict == Notify {
			later = append(later, Notice{Kind: NoticeLimitExceeded, PolicyID: p.ID, Message: f.Message})
		} else if best < 0 || f.Verdict.rank() > out.Findings[best].Verdict.rank() {
			best = len(out.Findings)
		}
		out.Findings = append(out.Findings, f)
	}
	if best >= 0 {
		d := &out.Findings[best]
		out.Verdict, out.PolicyID, out.Code, out.Limit, out.Message = d.Verdict, d.PolicyID, d.Code, d.Limit, d.Message
	}
	if out.Verdict == Confirm && len(queued) > 0 {
		// Confirmation outranks the queue, but an approval does not move
		// the window: once approved, the execute waits for it to open.
		at, ok := release(queued, in.Now)
		if ok {
			out.ReleaseAt = at
		} else {
			q := firstQueued(out.Findings)
			out.Verdict, out.PolicyID, out.Code, out.Limit = Block, q.PolicyID, CodeTimeWindow, q.Limit
			out.Message = q.Message + "; no window opens within " + strconv.Itoa(horizonDays) + " days"
		}
	}
	if out.Verdict == Queue {
		at, ok := release(queued, in.Now)
		if ok {
			out.ReleaseAt = at
			out.Message += "; queued until " + at.Format(time.RFC3339)
		} else {
			out.Verdict, out.Code = Block, CodeTimeWindow
			out.Message += "; no window opens within " + strconv.Itoa(horizonDays) + " days"
		}
	}
	switch out.Verdict {
	case Block:
		out.Notices = append(out.Notices, Notice{Kind: NoticeBlocked, PolicyID: out.PolicyID, Message: out.Message})
	case Confirm:
		out.Notices = append(out.Notices, Notice{Kind: NoticeConfirmNeeded, PolicyID: out.PolicyID, Message: out.Message})
	case Queue:
		out.Notices = append(out.Notices, Notice{Kind: NoticeQueued, PolicyID: out.PolicyID, Message: out.Message})
	}
	for _, n := range later {
		if n.Kind == NoticeLimit80 && out.Verdict == Block {
			continue
		}
		out.Notices = append(out.Notices, n)
	}
	return out
}

// firstQueued returns the first enforced queue finding of fs (Evaluate
// calls it only when there is one).
func firstQueued(fs []Finding) Finding {
	for _, f := range fs {
		if f.Verdict == Queue && !f.Shadow {
			return f
		}
	}
	return Finding{}
}

func wouldHave(v Verdict) string {
	switch v {
	case Block:
		return "blocked"
	case Confirm:
		return "required confirmation"
	case Queue:
		return "queued"
	}
	return "notified"
}

func cents(v int64) string { return strconv.FormatInt(v, 10) + " cents" }

// exceed is the verdict of a spending policy over one of its limits.
func exceed(s *Spending) Verdict {
	switch s.OnExceed {
	case OnExceedNotify:
		return Notify
	case OnExceedConfirm:
		return Confirm
	}
	return Block
}

// spending checks the per-transaction cap, then the daily, weekly and
// monthly totals with this execute; the first limit exceeded decides. It
// also returns the limit_80 notices of the totals this execute takes to
// 80 % of their limit or more without exceeding it.
func spending(p *Policy, l *Ledger, tc *totalsCache, in *Input, f Finding) (Finding, []Notice) {
	s := p.Spending
	amount := in.AmountCents
	if s.PerTransactionCents > 0 && amount > s.PerTransactionCents {
		f.Verdict, f.Limit = exceed(s), "per_transaction "+cents(s.PerTransactionCents)
		f.Message = "policy " + p.ID + ": " + cents(amount) + " exceeds the per-transaction limit of " + cents(s.PerTransactionCents)
	}
	if s.DailyCents == 0 && s.WeeklyCents == 0 && s.MonthlyCents == 0 {
		f.Code = codeIfBlock(f.Verdict, CodeSpendingLimit)
		return f, nil
	}
	t := tc.scope(l, in.Now.Unix(), p.Scope.Agents, p.Scope.BusinessID)
	var near []Notice
	for _, w := range [3]struct {
		name, span   string
		limit, total int64
	}{{"daily", "24 hours", s.DailyCents, t.Day}, {"weekly", "7 days", s.WeeklyCents, t.Week}, {"monthly", "30 days", s.MonthlyCents, t.Month}} {
		if w.limit == 0 {
			continue
		}
		after := satAdd(w.total, amount)
		if after > w.limit {
			if f.Verdict == Pass {
				f.Verdict, f.Limit = exceed(s), w.name+" "+cents(w.limit)
				f.Message = "policy " + p.ID + ": the " + w.name + " limit of " + cents(w.limit) + " would be exceeded (" +
					cents(w.total) + " in the last " + w.span + " and " + cents(amount) + " now)"
			}
			continue
		}
		if w.total*5 < w.limit*4 && after*5 >= w.limit*4 {
			near = append(near, Notice{Kind: NoticeLimit80, PolicyID: p.ID,
				Message: "policy " + p.ID + ": " + cents(after) + " of the " + w.name + " limit of " + cents(w.limit) + " spent in the last " + w.span})
		}
	}
	f.Code = codeIfBlock(f.Verdict, CodeSpendingLimit)
	return f, near
}

func codeIfBlock(v Verdict, code string) string {
	if v == Block {
		return code
	}
	return ""
}

// category checks the business's categories against an allowlist (one
// must be listed; a business with none is refused) or a blocklist (none
// may be listed).
func category(p *Policy, in *Input, f Finding) Finding {
	c := p.Category
	hit := ""
	for _, bc := range in.Categories {
		if contains(c.Categories, bc) {
			hit = bc
			break
		}
	}
	switch {
	case c.Mode == ModeAllow && hit == "":
		f.Message = "policy " + p.ID + ": business " + in.BusinessID + " is in none of the allowed categories " + strings.Join(c.Categories, ",")
	case c.Mode == ModeBlock && hit != "":
		f.Message = "policy " + p.ID + ": business " + in.BusinessID + " is in the blocked category " + hit
	default:
		return f
	}
	f.Verdict, f.Code, f.Limit = Block, CodeCategory, c.Mode+" "+strings.Join(c.Categories, ",")
	return f
}

// confirmation asks for a confirmation when the policy always does, when
// the amount is above its threshold, or when the agent has not dealt with
// the business before.
func confirmation(p *Policy, in *Input, f Finding) Finding {
	c := p.Confirmation
	switch {
	case c.Always:
		f.Limit, f.Message = "always", "policy "+p.ID+": every execute needs the consumer's confirmation"
	case c.AboveCents > 0 && in.AmountCents > c.AboveCents:
		f.Limit, f.Message = "above "+cents(c.AboveCents), "policy "+p.ID+": "+cents(in.AmountCents)+" is above "+cents(c.AboveCents)+" and needs the consumer's confirmation"
	case c.FirstTimeBusiness && in.FirstTime:
		f.Limit, f.Message = "first time with a business", "policy "+p.ID+": agent "+in.AgentID+" has not dealt with business "+in.BusinessID+" before and needs the consumer's confirmation"
	default:
		return f
	}
	f.Verdict = Confirm
	return f
}

// timeWindow checks the decision time against the windows; outside them
// the execute is blocked or queued (the release time is computed once for
// every queueing policy together).
func timeWindow(p *Policy, in *Input, f Finding) (Finding, zoned) {
	tw := p.TimeWindow
	loc, err := zone(tw.TimeZone)
	if err == nil && tw.open(loc, in.Now) {
		return f, zoned{}
	}
	f.Limit = tw.describe()
	f.Message = "policy " + p.ID + ": outside the time window " + f.Limit
	if err != nil || tw.Outside != OutsideQueue {
		f.Verdict, f.Code = Block, CodeTimeWindow
		return f, zoned{}
	}
	f.Verdict = Queue
	return f, zoned{tw, loc}
}
