package policy

// Type is the kind of a policy: which of its members carries its rule.
type Type string

// The four policy types (QWED Agent Policy Engine §3.1).
const (
	// TypeSpending caps what one execute, and the rolling day, week and
	// month, may spend (member spending).
	TypeSpending Type = "spending"
	// TypeCategory allows only, or blocks, businesses of some categories
	// (member category).
	TypeCategory Type = "category"
	// TypeConfirmation asks the consumer to approve an execute first
	// (member confirmation).
	TypeConfirmation Type = "confirmation"
	// TypeTimeWindow allows executes only on some days and hours in a time
	// zone (member time_window).
	TypeTimeWindow Type = "time_window"
)

// The values of Spending.OnExceed, Category.Mode and TimeWindow.Outside.
const (
	OnExceedBlock   = "block"
	OnExceedNotify  = "notify"
	OnExceedConfirm = "confirm"

	ModeAllow = "allow"
	ModeBlock = "block"

	OutsideBlock = "block"
	OutsideQueue = "queue"
)

// The bounds of a policy and of a consumer's set. Every one is checked by
// Decode (and Validate); a consumer's set holds at most MaxPolicies.
const (
	// MaxPolicyBytes bounds the JSON text of one policy.
	MaxPolicyBytes = 16 << 10
	// MaxIDChars bounds a policy id, an agent id and a business id (the
	// characters [A-Za-z0-9._:-], like a business id).
	MaxIDChars = 128
	// MaxNameChars bounds a policy's name (characters).
	MaxNameChars = 256
	// MaxScopeAgents bounds the agents of a group scope.
	MaxScopeAgents = 64
	// MaxCategories bounds the categories of a category policy (a
	// business has at most as many).
	MaxCategories = 32
	// MaxCategoryChars bounds one category token ([a-z0-9_-]).
	MaxCategoryChars = 64
	// MaxWindows bounds the windows of a time window policy.
	MaxWindows = 32
	// MaxTimeZoneChars bounds an IANA time zone name.
	MaxTimeZoneChars = 64
	// MaxCents bounds every amount of a policy: 10^15 cents (ten
	// trillion in a currency with two minor digits).
	MaxCents = 1_000_000_000_000_000
	// MaxPolicies bounds the policies of one consumer.
	MaxPolicies = 100
)

// Policy is one rule a consumer sets on the executes of their agents. It is
// recorded as sent (after Decode's checks) in the policy.changed event,
// with the version the gate gave it.
type Policy struct {
	// ID names the policy within its consumer: 1 to MaxIDChars characters
	// of [A-Za-z0-9._:-].
	ID string `json:"id"`
	// Name is a free label for people (at most MaxNameChars characters,
	// no control characters); optional.
	Name string `json:"name,omitempty"`
	// Type says which of Spending, Category, Confirmation and TimeWindow
	// holds the rule: exactly that one is set.
	Type Type `json:"type"`
	// Scope says which executes the policy applies to.
	Scope Scope `json:"scope"`
	// Shadow evaluates and records the policy ("would have blocked")
	// without enforcing it.
	Shadow bool `json:"shadow,omitempty"`
	// Override makes a business-scoped policy replace, for the executes
	// at its business, the consumer's policies of the same type that are
	// not overrides (see Evaluate's precedence). It requires
	// Scope.BusinessID.
	Override bool `json:"override,omitempty"`
	// Version is the policy's version, set by the gate: 1 at creation,
	// n+1 at each change. A client never sends it.
	Version int64 `json:"version,omitempty"`

	Spending     *Spending     `json:"spending,omitempty"`
	Category     *Category     `json:"category,omitempty"`
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	TimeWindow   *TimeWindow   `json:"time_window,omitempty"`
}

// Scope is what a policy applies to: the agents (none: every agent of the
// consumer; one: that agent; several: a group sharing one limit) and,
// optionally, one business.
type Scope struct {
	// Agents are agent ids, at most MaxScopeAgents, each once, sorted by
	// Decode.
	Agents []string `json:"agents,omitempty"`
	// BusinessID limits the policy to executes at that business ("": at
	// every business).
	BusinessID string `json:"business_id,omitempty"`
}

// Spending caps amounts in the minor units of the execute's currency
// ("cents"): a limit left out (0) is no limit; at least one is set. The
// totals are rolling (the last 24 hours, 7 days, 30 days), not calendar
// ones; see Ledger for their precision.
type Spending struct {
	PerTransactionCents int64 `json:"per_transaction_cents,omitempty"`
	DailyCents          int64 `json:"daily_cents,omitempty"`
	WeeklyCents         int64 `json:"weekly_cents,omitempty"`
	MonthlyCents        int64 `json:"monthly_cents,omitempty"`
	// OnExceed is what an execute over a limit meets: block (the
	// default), notify (it proceeds and the consumer is told) or confirm
	// (the consumer approves it first).
	OnExceed string `json:"on_exceed,omitempty"`
}

// Category restricts the businesses an agent may deal with by the
// categories the business registered.
type Category struct {
	// Mode is allow (only businesses with one of Categories) or block
	// (every business but those with one of Categories).
	Mode string `json:"mode"`
	// Categories are lowercase tokens, 1 to MaxCategories of them, each
	// once, sorted by Decode.
	Categories []string `json:"categories"`
}

// Confirmation asks the consumer to approve an execute first: always,
// above an amount, or the first time an agent deals with a business (at
// least one of them).
type Confirmation struct {
	Always            bool  `json:"always,omitempty"`
	AboveCents        int64 `json:"above_cents,omitempty"`
	FirstTimeBusiness bool  `json:"first_time_business,omitempty"`
}

// TimeWindow allows executes only inside its windows, read on the wall
// clock of an IANA time zone.
type TimeWindow struct {
	// TimeZone is an IANA time zone name ("Europe/Paris", "UTC").
	TimeZone string `json:"time_zone"`
	// Windows are the open periods, 1 to MaxWindows; no two overlap.
	Windows []Window `json:"windows"`
	// Outside is what an execute outside every window meets: block (the
	// default) or queue (it waits until the next window opens).
	Outside string `json:"outside,omitempty"`
}

// Window is an open period on some days of the week: from Start (included)
// to End (excluded), both "HH:MM" wall-clock times of the policy's zone,
// Start before End, End at most "24:00". A period across midnight is two
// windows.
type Window struct {
	// Days are "mon" … "sun", each once, 1 to 7 of them.
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}
