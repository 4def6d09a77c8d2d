package domain

import (
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// Agent-to-agent interception (QWED A2A; issue 13): the commands, events,
// configuration and state. Decide's rules are in a2arules.go, the fold in
// a2aapply.go.

// The commands of agent-to-agent interception (also their CloudEvent types).
const (
	// CmdA2AMessage submits one AgentMessage for a verdict.
	CmdA2AMessage CommandType = "qwed.a2a.message"
	// CmdA2ABoundary changes a trust boundary (trust, untrust, block,
	// unblock an agent; block or unblock a sender→receiver pair).
	CmdA2ABoundary CommandType = "qwed.a2a.boundary"
)

// The events of agent-to-agent interception.
const (
	// EvA2AVerdict records the verdict on an AgentMessage, of any status.
	EvA2AVerdict EventType = "a2a.verdict"
	// EvA2ABoundaryChanged records a change of a trust boundary; the
	// event's Command.Principal names the boundary ("*": gate-wide).
	EvA2ABoundaryChanged EventType = "a2a.boundary_changed"
)

// The operations of a boundary change.
const (
	A2AOpTrust       = "trust"
	A2AOpUntrust     = "untrust"
	A2AOpBlock       = "block"
	A2AOpUnblock     = "unblock"
	A2AOpBlockPair   = "block_pair"
	A2AOpUnblockPair = "unblock_pair"
)

// A2ABoundaryChange is one change of a trust boundary: Agent names the agent
// of trust, untrust, block and unblock; Sender and Receiver the pair of
// block_pair and unblock_pair.
type A2ABoundaryChange struct {
	Op       string `json:"op"`
	Agent    string `json:"agent,omitempty"`
	Sender   string `json:"sender,omitempty"`
	Receiver string `json:"receiver,omitempty"`
}

// A2AVerdict is the verdict on an AgentMessage (QWED A2A "Verdict + JWT").
type A2AVerdict struct {
	// Boundary is the principal whose trust boundary applied ("*" for the
	// admin key: the gate-wide boundary only).
	Boundary    string          `json:"boundary"`
	Sender      string          `json:"sender"`
	Receiver    string          `json:"receiver"`
	PayloadType a2a.PayloadType `json:"payload_type"`
	Status      a2a.Status      `json:"status"`
	Reason      string          `json:"reason"`
	// Engine is the a2a.Engine* that gave the verdict.
	Engine string `json:"engine_used"`
	// TraceID is the message's trace_id, else A2ATraceIDFor the request.
	TraceID string `json:"trace_id"`
	// PayloadDigest is "sha256:" + the hex SHA-256 of the RFC 8785 form
	// of the payload: the attestation's sub.
	PayloadDigest string `json:"payload_digest"`
	// Attestation is the ES256 JWT of the verdict; "" only on a verdict of
	// status error whose attestation could not be issued.
	Attestation string `json:"attestation_jwt"`
	// RetryAfterMs is when a rate-limited sender may retry.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
	// Shadow marks a message forwarded despite an engine error
	// (block_on_error false: shadow mode).
	Shadow  bool        `json:"shadow,omitempty"`
	Details *A2ADetails `json:"details,omitempty"`
}

// A2ADetails are the typed details of a verdict.
type A2ADetails struct {
	ClaimedTotal   string            `json:"claimed_total,omitempty"`
	ComputedTotal  string            `json:"computed_total,omitempty"`
	Contradictions []string          `json:"contradictions,omitempty"`
	Patterns       []string          `json:"patterns,omitempty"`
	Findings       []engines.Finding `json:"findings,omitempty"`
	EngineError    string            `json:"engine_error,omitempty"`
}

// A2AConfig is the configuration of agent-to-agent interception (QWED A2A
// "Configuration"). Config.A2A nil stands for DefaultA2AConfig, so that a
// log written before it encodes its gate.configured events unchanged.
type A2AConfig struct {
	EnableFinancialVerification bool `json:"enable_financial_verification"`
	EnableLogicVerification     bool `json:"enable_logic_verification"`
	EnableCodeVerification      bool `json:"enable_code_verification"`
	// BlockOnError false is shadow mode: a message whose engine erred is
	// forwarded, and its verdict says so (A2AVerdict.Shadow).
	BlockOnError bool `json:"block_on_error"`
	// MaxPayloadSizeBytes bounds a message's payload (its JSON text).
	MaxPayloadSizeBytes int64 `json:"max_payload_size_bytes"`
	// RatePerMinute and Burst are the token bucket of a (boundary, sender,
	// receiver) pair; IdleEvict how long a pair's bucket outlives its
	// last message.
	RatePerMinute int64    `json:"rate_per_minute"`
	Burst         int64    `json:"burst"`
	IdleEvict     Duration `json:"idle_evict"`
	// DefaultAllow false is strict mode (deny-all): a message passes the
	// trust boundary only when its sender and its receiver are both
	// allowlisted.
	DefaultAllow bool `json:"default_allow"`
	// BypassAgents skip verification (engine bypass): QWED A2A's
	// trusted_agents.
	BypassAgents []string `json:"bypass_agents,omitempty"`
	// TrustedAgents is the gate-wide allowlist (QWED_A2A_TRUSTED_AGENTS).
	TrustedAgents []string `json:"trusted_agents,omitempty"`
}

// Named limits of agent-to-agent interception (invariant 7,
// docs/ARCHITECTURE.md).
const (
	// MaxA2AAgents bounds each agent list of a boundary (trusted,
	// blocked) and of the configuration (trusted, bypass).
	MaxA2AAgents = 10_000
	// MaxA2APairs bounds the blocked pairs of a boundary.
	MaxA2APairs = 10_000
	// MaxA2ABuckets bounds the token buckets of a partition; a pair that
	// would need one more while none is idle is rate limited until the
	// least recently used one goes idle (fail closed).
	MaxA2ABuckets = 100_000
	// MaxA2ABucketsPerBoundary bounds the token buckets of one boundary
	// (a principal's, or the gate-wide one), so that no tenant takes the
	// buckets of the others: a pair of a boundary that holds as many is
	// rate limited until one of them is evicted (fail closed).
	MaxA2ABucketsPerBoundary = 10_000
	// MaxA2APayloadBytes bounds the configurable max_payload_size_bytes.
	MaxA2APayloadBytes = 16 << 20
	// MaxA2ARatePerMinute bounds rate_per_minute and burst.
	MaxA2ARatePerMinute = 1_000_000
)

// DefaultA2AConfig is the configuration when Config.A2A is nil: every guard
// on, block on error, 1 MiB payloads, 60 messages a minute with a burst of
// 60 per pair, buckets evicted after 5 minutes idle, deny-all.
func DefaultA2AConfig() A2AConfig {
	return A2AConfig{
		EnableFinancialVerification: true, EnableLogicVerification: true, EnableCodeVerification: true,
		BlockOnError: true, MaxPayloadSizeBytes: 1 << 20, RatePerMinute: 60, Burst: 60,
		IdleEvict: Duration(5 * time.Minute),
	}
}

// Equal reports whether c and o are the same configuration.
func (c *A2AConfig) Equal(o *A2AConfig) bool {
	if c == nil || o == nil {
		return c == o
	}
	return c.EnableFinancialVerification == o.EnableFinancialVerification && c.EnableLogicVerification == o.EnableLogicVerification &&
		c.EnableCodeVerification == o.EnableCodeVerification && c.BlockOnError == o.BlockOnError &&
		c.MaxPayloadSizeBytes == o.MaxPayloadSizeBytes && c.RatePerMinute == o.RatePerMinute && c.Burst == o.Burst &&
		c.IdleEvict == o.IdleEvict && c.DefaultAllow == o.DefaultAllow &&
		slices.Equal(c.BypassAgents, o.BypassAgents) && slices.Equal(c.TrustedAgents, o.TrustedAgents)
}

// Equal reports whether c and o are the same configuration (A2A compared
// by value; a nil A2A equals only a nil one).
func (c Config) Equal(o Config) bool {
	a, b := c.A2A, o.A2A
	c.A2A, o.A2A = nil, nil
	return c == o && a.Equal(b)
}

// defaultA2A is DefaultA2AConfig, built once: Decide reads it for every
// message of a gate with no A2A configuration.
var defaultA2A = DefaultA2AConfig()

// A2ASettings returns the A2A configuration in force: c.A2A, or the
// defaults when it is nil. The result shares c.A2A's lists: read it only.
func (c *Config) A2ASettings() *A2AConfig {
	if c.A2A != nil {
		return c.A2A
	}
	return &defaultA2A
}

// Validate returns the first setting out of its bounds, as a QWED-REQ-001
// error naming it; nil when every setting holds.
func (c *A2AConfig) Validate() *Error {
	switch {
	case c.MaxPayloadSizeBytes < 1 || c.MaxPayloadSizeBytes > MaxA2APayloadBytes:
		return fieldError(CodeInvalidRequest, "config.a2a.max_payload_size_bytes", "must be between 1 and %d", MaxA2APayloadBytes)
	case c.RatePerMinute < 1 || c.RatePerMinute > MaxA2ARatePerMinute:
		return fieldError(CodeInvalidRequest, "config.a2a.rate_per_minute", "must be between 1 and %d", MaxA2ARatePerMinute)
	case c.Burst < 1 || c.Burst > MaxA2ARatePerMinute:
		return fieldError(CodeInvalidRequest, "config.a2a.burst", "must be between 1 and %d", MaxA2ARatePerMinute)
	case c.IdleEvict <= 0:
		return fieldError(CodeInvalidRequest, "config.a2a.idle_evict", "must be positive")
	case len(c.BypassAgents) > MaxA2AAgents:
		return fieldError(CodeInvalidRequest, "config.a2a.bypass_agents", "at most %d agents", MaxA2AAgents)
	case len(c.TrustedAgents) > MaxA2AAgents:
		return fieldError(CodeInvalidRequest, "config.a2a.trusted_agents", "at most %d agents", MaxA2AAgents)
	}
	for _, l := range [...]struct {
		name string
		ids  []string
	}{{"config.a2a.bypass_agents", c.BypassAgents}, {"config.a2a.trusted_agents", c.TrustedAgents}} {
		for i, id := range l.ids {
			if !validA2AAgent(id) {
				return fieldError(CodeInvalidRequest, l.name, "'%s' is not an agent id (1-256 characters, no control characters)", id)
			}
			if i > 0 && l.ids[i-1] >= id {
				return fieldError(CodeInvalidRequest, l.name, "must be sorted and without repeats (NormalizeA2AAgents)")
			}
		}
	}
	return nil
}

// NormalizeA2AAgents returns ids sorted, without repeats and empty
// entries, as a configuration's agent lists must be (Decide searches
// them); nil when none is left.
func NormalizeA2AAgents(ids []string) []string {
	out := slices.DeleteFunc(slices.Clone(ids), func(s string) bool { return s == "" })
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// validA2AAgent reports whether id can name an agent of a message, as
// a2a.Validate checks sender_agent_id: 1 to a2a.MaxAgentIDChars
// characters of valid UTF-8, no control or format character.
func validA2AAgent(id string) bool {
	if id == "" || !utf8.ValidString(id) {
		return false
	}
	n := 0
	for _, r := range id {
		n++
		if r == utf8.RuneError || unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return n <= a2a.MaxAgentIDChars
}

// A2AState is the state of agent-to-agent interception of one partition:
// the trust boundaries, and the token buckets of the pairs that passed
// them. It is folded by Apply from a2a.boundary_changed and a2a.verdict
// events.
type A2AState struct {
	// Boundaries by principal ("*": gate-wide, the admin's).
	Boundaries map[string]*A2ABoundary `json:"boundaries,omitempty"`
	// Buckets by pair; lru lists them least recently used first (the
	// order of their last use, which Apply gives by event seq).
	Buckets map[A2APair]*A2ABucket `json:"-"`
	lru     a2aLRU
	// perBoundary counts the buckets of each boundary (derived from
	// Buckets).
	perBoundary map[string]int
}

// addBucket adds a new bucket as the most recently used.
func (a *A2AState) addBucket(b *A2ABucket) {
	if a.Buckets == nil {
		a.Buckets = map[A2APair]*A2ABucket{}
	}
	if a.perBoundary == nil {
		a.perBoundary = map[string]int{}
	}
	a.Buckets[b.Pair] = b
	a.perBoundary[b.Pair.Boundary]++
	a.lru.pushBack(b)
}

// dropBucket removes a bucket.
func (a *A2AState) dropBucket(b *A2ABucket) {
	a.lru.remove(b)
	delete(a.Buckets, b.Pair)
	if n := a.perBoundary[b.Pair.Boundary] - 1; n > 0 {
		a.perBoundary[b.Pair.Boundary] = n
	} else {
		delete(a.perBoundary, b.Pair.Boundary)
	}
}

// boundaryFull reports whether boundary holds MaxA2ABucketsPerBoundary
// buckets once the Apply of an event at now has evicted the idle ones
// (applyA2AEvict: the evictable prefix of the LRU order).
func (a *A2AState) boundaryFull(cfg *A2AConfig, boundary string, now time.Time) bool {
	n := a.perBoundary[boundary]
	for b := a.lru.head; n >= MaxA2ABucketsPerBoundary && a2aEvictable(cfg, b, now); b = b.next {
		if b.Pair.Boundary == boundary {
			n--
		}
	}
	return n >= MaxA2ABucketsPerBoundary
}

// A2ABoundary is one principal's trust boundary: its allowlist, its
// blocked agents and its blocked sender→receiver pairs, each kept sorted.
type A2ABoundary struct {
	Trusted      []string    `json:"trusted,omitempty"`
	Blocked      []string    `json:"blocked,omitempty"`
	BlockedPairs []A2AAgents `json:"blocked_pairs,omitempty"`
}

// A2AAgents is a sender→receiver pair of agents.
type A2AAgents struct {
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
}

// A2APair is the key of a token bucket: the boundary and the agents.
type A2APair struct {
	Boundary string `json:"boundary"`
	A2AAgents
}

// A2ABucket is the token bucket of one pair and its place in the LRU order.
type A2ABucket struct {
	Pair   A2APair    `json:"pair"`
	Bucket a2a.Bucket `json:"bucket"`
	// LastSeq is the event seq of the last message that took a token:
	// the LRU order (the bucket's Last is that message's time).
	LastSeq uint64 `json:"last_seq"`

	prev, next *A2ABucket
}

// a2aLRU is the doubly linked list of the buckets, least recently used
// first.
type a2aLRU struct {
	head, tail *A2ABucket
}

func (l *a2aLRU) remove(b *A2ABucket) {
	if b.prev != nil {
		b.prev.next = b.next
	} else {
		l.head = b.next
	}
	if b.next != nil {
		b.next.prev = b.prev
	} else {
		l.tail = b.prev
	}
	b.prev, b.next = nil, nil
}

func (l *a2aLRU) pushBack(b *A2ABucket) {
	b.prev, b.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = b
	} else {
		l.head = b
	}
	l.tail = b
}

// Oldest returns the least recently used bucket, nil when there is none.
func (a *A2AState) Oldest() *A2ABucket { return a.lru.head }

// BucketList returns the buckets least recently used first (the order a
// snapshot stores them in).
func (a *A2AState) BucketList() []*A2ABucket {
	out := make([]*A2ABucket, 0, len(a.Buckets))
	for b := a.lru.head; b != nil; b = b.next {
		out = append(out, b)
	}
	return out
}

// RestoreBuckets rebuilds the buckets of a snapshot: bs in any order; the
// LRU order is that of their LastSeq (event seqs are unique), so the
// restored state equals the folded one.
func (a *A2AState) RestoreBuckets(bs []A2ABucket) {
	sorted := make([]*A2ABucket, len(bs))
	for i := range bs {
		b := bs[i]
		b.prev, b.next = nil, nil
		sorted[i] = &b
	}
	slices.SortFunc(sorted, func(x, y *A2ABucket) int {
		switch {
		case x.LastSeq < y.LastSeq:
			return -1
		case x.LastSeq > y.LastSeq:
			return 1
		}
		return 0
	})
	a.Buckets = make(map[A2APair]*A2ABucket, len(sorted))
	a.lru, a.perBoundary = a2aLRU{}, nil
	for _, b := range sorted {
		if old := a.Buckets[b.Pair]; old != nil {
			a.dropBucket(old)
		}
		a.addBucket(b)
	}
}

func (a *A2AState) clone() *A2AState {
	if a == nil {
		return nil
	}
	c := &A2AState{}
	if a.Boundaries != nil {
		c.Boundaries = make(map[string]*A2ABoundary, len(a.Boundaries))
		for p, b := range a.Boundaries {
			if b == nil {
				c.Boundaries[p] = nil
				continue
			}
			c.Boundaries[p] = &A2ABoundary{Trusted: slices.Clone(b.Trusted), Blocked: slices.Clone(b.Blocked),
				BlockedPairs: slices.Clone(b.BlockedPairs)}
		}
	}
	if a.Buckets != nil {
		bs := make([]A2ABucket, 0, len(a.Buckets))
		for b := a.lru.head; b != nil; b = b.next {
			bs = append(bs, *b)
		}
		c.RestoreBuckets(bs)
	}
	return c
}

// has reports whether sorted list l holds x.
func has(l []string, x string) bool {
	_, ok := slices.BinarySearch(l, x)
	return ok
}

// hasPair reports whether sorted pairs l hold p.
func hasPair(l []A2AAgents, p A2AAgents) bool {
	_, ok := slices.BinarySearchFunc(l, p, comparePairs)
	return ok
}

func comparePairs(x, y A2AAgents) int {
	switch {
	case x.Sender < y.Sender:
		return -1
	case x.Sender > y.Sender:
		return 1
	case x.Receiver < y.Receiver:
		return -1
	case x.Receiver > y.Receiver:
		return 1
	}
	return 0
}
