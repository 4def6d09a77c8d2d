package domain

import "time"

// State is everything Decide needs, for one partition. It is built only by
// Apply (from the log, or from a projection snapshot of an earlier Apply).
// Maps are never iterated where order could reach an output.
type State struct {
	Config Config `json:"config"`
	// Agents by agent ID.
	Agents map[string]*Agent `json:"agents"`
	// Approvals by approval ID (open and resolved, so the agent can read
	// the outcome).
	Approvals map[string]*Approval `json:"approvals"`
	// Principals by principal ID: tool registries and key hashes.
	Principals map[string]*Principal `json:"principals"`
	// Keys maps an API key hash to its principal.
	Keys map[string]string `json:"keys"`
	// KeyIDs maps an API key's ID to its hash, for revocation by ID.
	KeyIDs map[string]string `json:"key_ids,omitempty"`
	// LastTime is the time of the last applied event; the worker never
	// passes an earlier Now.
	LastTime time.Time `json:"last_time"`
	// A2A is the state of agent-to-agent interception (a2a.go); nil until
	// the first A2A event.
	A2A *A2AState `json:"a2a,omitempty"`
	// Copies is how far each partition has copied GlobalPartition's
	// principal-wide events (global.go), by copying partition: a
	// partition's state holds its own entry, the Kafka read model one per
	// partition. Nil until the first copy.
	Copies map[int32]CopyPosition `json:"copies,omitempty"`
	// Exec is the state of the consumer policy engine (execute_types.go);
	// nil until its first event.
	Exec *ExecState `json:"exec,omitempty"`
}

// NewState returns the empty state of a new gate.
func NewState() *State {
	return &State{
		Config:     initialConfig(),
		Agents:     map[string]*Agent{},
		Approvals:  map[string]*Approval{},
		Principals: map[string]*Principal{},
		Keys:       map[string]string{},
		KeyIDs:     map[string]string{},
	}
}

// Principal is the gate's view of one principal.
type Principal struct {
	ID    string              `json:"id"`
	Tools map[string]ToolSpec `json:"tools,omitempty"`
	// Permissions is the principal's default path and egress policy
	// (principalperms.go); nil: none. Never changed in place.
	Permissions *PrincipalPermissions `json:"permissions,omitempty"`
}

// AgentStatus values.
const (
	StatusActive    = "active"
	StatusSuspended = "suspended"
)

// Agent is one registered agent and its running state.
type Agent struct {
	ID          string      `json:"agent_id"`
	DID         string      `json:"did"`
	Info        AgentInfo   `json:"agent"`
	Permissions Permissions `json:"permissions"`
	Budget      Limits      `json:"budget"`
	TokenHash   string      `json:"token_hash"`
	Status      string      `json:"status"`
	Trust       TrustLevel  `json:"trust_level"`
	CreatedAt   time.Time   `json:"created_at"`

	Usage         Usage                    `json:"usage"`
	Conversations map[string]*Conversation `json:"conversations"`
	// OpenActions are approved or pending actions whose execution has not
	// been logged yet, by action ID (bounded by MaxOpenActions).
	OpenActions map[string]*OpenAction `json:"open_actions"`
	// OpenOrder lists OpenActions oldest first, for eviction.
	OpenOrder []string `json:"open_order"`
	// Recent holds the last RecentWindow decisions (true = denied) for the
	// denial-rate rule, oldest first.
	Recent []bool `json:"recent"`
	// BudgetDenials holds the times of recent budget denials (last hour).
	BudgetDenials []time.Time `json:"budget_denials"`
	// Totals since registration, for trust evidence and summaries.
	TotalActions  int64 `json:"total_actions"`
	DeniedActions int64 `json:"denied_actions"`
	Attestations  int64 `json:"attestations"`
	// LoggedActions lists the action IDs whose execution was logged, oldest
	// first (bounded by MaxLoggedActions), so a second log is a conflict.
	LoggedActions []string `json:"logged_actions,omitempty"`
}

// Usage is an agent's budget usage. Daily counters belong to Day (days since
// the Unix epoch, UTC) and reset when the day changes; hourly counters are
// exact sliding windows holding the times of the admitted requests (at most
// the limit's worth, so memory is bounded by the limit).
type Usage struct {
	Day             int64       `json:"day"`
	DailyCost       USD         `json:"daily_cost_usd"`
	DailyRequests   int64       `json:"daily_requests"`
	DailyTokens     int64       `json:"daily_tokens"`
	DailyHighRisk   int64       `json:"daily_high_risk_calls"`
	HourlyRequests  []time.Time `json:"hourly_requests,omitempty"`
	HourlyToolCalls []time.Time `json:"hourly_tool_calls,omitempty"`
}

// Conversation is the state of one (agent, conversation) pair.
type Conversation struct {
	// LastStep is the highest committed step.
	LastStep int64 `json:"last_step"`
	// LastFingerprint and Repeats track consecutive identical actions
	// (LOOP-003) among committed steps.
	LastFingerprint string `json:"last_fingerprint,omitempty"`
	Repeats         int64  `json:"repeats"`
	// StateWindow holds the last DoomWindow approved state fingerprints
	// (LOOP-004), oldest first.
	StateWindow []string  `json:"state_window,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// OpenAction is an approved or pending action awaiting its execution log.
type OpenAction struct {
	// Seq is the seq of the event that decided the action: the log
	// position the projections key an open action by.
	Seq            uint64    `json:"seq"`
	Day            int64     `json:"day"`
	ReservedCost   USD       `json:"reserved_cost_usd"`
	ReservedTokens int64     `json:"reserved_tokens"`
	Status         Decision  `json:"status"`
	At             time.Time `json:"at"`
	// SandboxRequired is the decision's sandbox_required: the execution
	// log must attest sandboxed: true (Config.SandboxAttestation).
	SandboxRequired bool `json:"sandbox_required,omitempty"`
}

// Named limits (invariant 7, docs/ARCHITECTURE.md).
const (
	// RecentWindow is the number of decisions the denial-rate rule looks at.
	RecentWindow = 100
	// RecentMinimum is the number of decisions before the rule applies.
	RecentMinimum = 20
	// DoomWindow is the LOOP-004 sliding window length.
	DoomWindow = 20
	// DoomThreshold is the number of occurrences that halts (LOOP-004).
	DoomThreshold = 3
	// MaxOpenActions bounds the actions awaiting an execution log per agent.
	MaxOpenActions = 4096
	// MaxHourlyLimit bounds the hourly limits (memory of sliding windows).
	MaxHourlyLimit = 100_000
)
