package httpapi

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
	"github.com/agentgate/agentgate/projections"
)

// The reads of agent-to-agent interception (QWED A2A): GET /a2a/boundary,
// GET /a2a/metrics and GET /a2a/health, and the gate-wide verdict counters
// on /metrics. docs/ARCHITECTURE.md, "Reads: the boundary, metrics, audit".

// gateScope is the scope of GET /a2a/metrics answered to the admin key
// without ?principal=: every boundary's verdicts.
const gateScope = "gate"

// a2aListView is one page of a boundary list: agent ids (trusted, blocked)
// or pairs, in lexical order; count is the whole list's length;
// next_after is the after of the next page (null on the last).
type a2aListView struct {
	Count     int           `json:"count"`
	Agents    []string      `json:"agents,omitempty"`
	Pairs     []a2aPairView `json:"pairs,omitempty"`
	NextAfter *string       `json:"next_after"`
}

type a2aPairView struct {
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
}

// a2aBoundaryView is one boundary: its principal ("*" gate-wide) and its
// three lists (only the one asked for with ?list=).
type a2aBoundaryView struct {
	Principal     string       `json:"principal"`
	TrustedAgents *a2aListView `json:"trusted_agents,omitempty"`
	BlockedAgents *a2aListView `json:"blocked_agents,omitempty"`
	BlockedPairs  *a2aListView `json:"blocked_pairs,omitempty"`
}

// a2aBoundaryAnswer is the answer of GET /a2a/boundary: the boundary, and
// for a principal's the gate-wide one it inherits (inherited: true), with
// the configured gate-wide allowlist (QWED_A2A_TRUSTED_AGENTS) and whether
// the gate is in strict (deny-all) mode.
type a2aBoundaryAnswer struct {
	a2aBoundaryView
	Inherited *a2aInheritedView `json:"inherited,omitempty"`
	// ConfiguredTrusted is the configured gate-wide allowlist (first
	// page; list=configured_trusted_agents pages it).
	ConfiguredTrusted *a2aListView `json:"configured_trusted_agents,omitempty"`
	DefaultAllow      bool         `json:"default_allow"`
	// AtSeq and AtTime are set on a read as of a past event (at_seq, at_time).
	AtSeq  *uint64    `json:"at_seq,omitempty"`
	AtTime *time.Time `json:"at_time,omitempty"`
}

// a2aInheritedView is the gate-wide boundary a principal's inherits.
type a2aInheritedView struct {
	a2aBoundaryView
	Inherited bool `json:"inherited"`
}

// The list names of ?list=.
const (
	listTrusted    = "trusted_agents"
	listBlocked    = "blocked_agents"
	listPairs      = "blocked_pairs"
	listConfigured = "configured_trusted_agents"
)

// a2aQuery is the query of the A2A reads.
type a2aQuery struct {
	// principal is ?principal= ("" when absent).
	principal string
	// list is ?list= ("" for every list).
	list string
	// after is the decoded cursor (a list entry; "" from the first).
	after string
	limit int
	// atSeq, atTime: a read as of a past event (at most one of them).
	atSeq  uint64
	atTime *time.Time
	// sender picks the log of a read as of a past event (Kafka mode: the
	// events partition of the sender's messages).
	sender string
}

// maxCursorBytes bounds a decoded cursor: a pair of two agent ids and
// its separator.
const maxCursorBytes = 2*domain.MaxIDBytes + 1

// encodeCursor is the next_after of a page ending at entry e.
func encodeCursor(e string) *string {
	if e == "" {
		return nil
	}
	s := base64.RawURLEncoding.EncodeToString([]byte(e))
	return &s
}

// parseA2AQuery reads principal, list, after, limit, at_seq, at_time and
// sender; lists names the accepted values of list ("" accepted always).
func parseA2AQuery(q url.Values, lists ...string) (a2aQuery, *apiError) {
	var out a2aQuery
	bad := func(field, expected, format string, args ...any) (a2aQuery, *apiError) {
		return out, reject(domain.CodeInvalidRequest, map[string]any{"field": field, "expected": expected}, format, args...)
	}
	for _, f := range [...]string{"principal", "list", "after", "limit", "at_seq", "at_time", "sender"} {
		if len(q[f]) > 1 {
			return bad(f, "one value", "%s is given more than once", f)
		}
	}
	out.principal = q.Get("principal")
	if _, ok := q["principal"]; ok && !validID(out.principal) && out.principal != domain.AdminPrincipal {
		return bad("principal", "an identifier", "principal must be 1-%d bytes without control characters", MaxPathIDBytes)
	}
	out.list = q.Get("list")
	if out.list != "" {
		ok := false
		for _, l := range lists {
			ok = ok || l == out.list
		}
		if !ok {
			return bad("list", strings.Join(lists, ", "), "list must be one of %s", strings.Join(lists, ", "))
		}
	}
	if s := q.Get("after"); s != "" {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) == 0 || len(b) > maxCursorBytes {
			return bad("after", "the next_after of a page", "after is not the next_after of a page")
		}
		out.after = string(b)
	}
	var e *apiError
	if out.limit, e = parseLimit(q); e != nil {
		return out, e
	}
	seqText, timeText := q.Get("at_seq"), q.Get("at_time")
	switch {
	case seqText != "" && timeText != "":
		return bad("at_seq", "at_seq or at_time", "give at most one of at_seq and at_time")
	case seqText != "":
		n, err := strconv.ParseUint(seqText, 10, 64)
		if err != nil || n == 0 {
			return bad("at_seq", "positive integer", "at_seq must be a positive integer")
		}
		out.atSeq = n
	case timeText != "":
		t, e := parseTime("at_time", timeText)
		if e != nil {
			return out, e
		}
		out.atTime = &t
	}
	out.sender = q.Get("sender")
	if _, ok := q["sender"]; ok && !validID(out.sender) {
		return bad("sender", "an agent id", "sender must be 1-%d bytes without control characters", MaxPathIDBytes)
	}
	return out, nil
}

// validID reports whether s is 1..MaxPathIDBytes bytes without control
// characters.
func validID(s string) bool {
	if s == "" || len(s) > MaxPathIDBytes {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// a2aScope authenticates an A2A read (an API key: the boundaries and
// counters are a principal's, not an agent's) and returns the boundary it
// reads: the caller's own, or with ?principal= another (the admin key
// only; a principal may name its own or "*", the gate-wide boundary it
// inherits, when inherited is set). def is the admin's boundary without
// ?principal=.
func (a *api) a2aScope(r *http.Request, c *call, q a2aQuery, def string, inherited bool) (string, *apiError) {
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		return "", e
	}
	p := c.creds.Principal
	switch {
	case q.principal == "" && p == domain.AdminPrincipal:
		return def, nil
	case q.principal == "" || q.principal == p:
		return p, nil
	case p == domain.AdminPrincipal, inherited && q.principal == domain.AdminPrincipal:
		return q.principal, nil
	}
	return "", reject(domain.CodeForbidden, map[string]any{"field": "principal"},
		"the API key's principal reads only its own A2A boundary and counters")
}

// getA2ABoundary answers GET /a2a/boundary.
func (a *api) getA2ABoundary(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ctx := r.Context()
	q, e := parseA2AQuery(r.URL.Query(), listTrusted, listBlocked, listPairs, listConfigured)
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	boundary, e := a.a2aScope(r, c, q, domain.AdminPrincipal, true)
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	cfg, err := a.cfg.Store.GateConfig()
	if err != nil {
		a.a2aUnavailable(w, "the configuration", err)
		return
	}
	set := cfg.A2ASettings()
	out := a2aBoundaryAnswer{DefaultAllow: set.DefaultAllow}
	// own and global list a boundary: from the store, or as of an event.
	var own, global func(l projections.A2AList, after string) (projections.A2AListPage, error)
	if q.atSeq != 0 || q.atTime != nil {
		past, ok := a.a2aPast(w, r, c, q, boundary)
		if !ok {
			return
		}
		out.AtSeq, out.AtTime = &past.Seq, &past.Time
		own = memList(&past.Boundary, q.limit)
		global = memList(&past.Inherited, q.limit)
	} else {
		own = storeList(a.cfg.Store, boundary, q.limit)
		global = storeList(a.cfg.Store, domain.AdminPrincipal, q.limit)
	}
	if q.list == listConfigured {
		v, err := configuredList(set.TrustedAgents, q.after, q.limit)
		if err != nil {
			a.a2aUnavailable(w, "the configuration", err)
			return
		}
		out.ConfiguredTrusted = v
		out.Principal = boundary
		writeValue(w, http.StatusOK, out)
		return
	}
	if out.a2aBoundaryView, err = boundaryView(boundary, own, q); err != nil {
		a.a2aUnavailable(w, "the boundary", err)
		return
	}
	if boundary != domain.AdminPrincipal && q.list == "" {
		v, err := boundaryView(domain.AdminPrincipal, global, a2aQuery{})
		if err != nil {
			a.a2aUnavailable(w, "the gate-wide boundary", err)
			return
		}
		out.Inherited = &a2aInheritedView{a2aBoundaryView: v, Inherited: true}
	}
	if q.list == "" {
		if out.ConfiguredTrusted, err = configuredList(set.TrustedAgents, "", q.limit); err != nil {
			a.a2aUnavailable(w, "the configuration", err)
			return
		}
	}
	writeValue(w, http.StatusOK, out)
}

// storeList lists a stored boundary.
func storeList(s *projections.Store, boundary string, limit int) func(projections.A2AList, string) (projections.A2AListPage, error) {
	return func(l projections.A2AList, after string) (projections.A2AListPage, error) {
		return s.A2ABoundaryList(boundary, l, after, limit)
	}
}

// memList lists a boundary held in memory (as of a past event).
func memList(b *domain.A2ABoundary, limit int) func(projections.A2AList, string) (projections.A2AListPage, error) {
	return func(l projections.A2AList, after string) (projections.A2AListPage, error) {
		var entries []string
		switch l {
		case projections.A2ATrustedAgents:
			entries = b.Trusted
		case projections.A2ABlockedAgents:
			entries = b.Blocked
		default:
			entries = make([]string, len(b.BlockedPairs))
			for i, p := range b.BlockedPairs {
				entries[i] = projections.JoinA2APair(p.Sender, p.Receiver)
			}
		}
		return projections.PageA2AList(entries, after, limit)
	}
}

// configuredList pages the configured gate-wide allowlist (sorted).
func configuredList(ids []string, after string, limit int) (*a2aListView, error) {
	sorted := append([]string(nil), ids...)
	slices.Sort(sorted)
	p, err := projections.PageA2AList(sorted, after, limit)
	if err != nil {
		return nil, err
	}
	return listView(p, projections.A2ATrustedAgents), nil
}

// boundaryView renders a boundary's lists (only q.list when set, from
// q.after).
func boundaryView(principal string, list func(projections.A2AList, string) (projections.A2AListPage, error), q a2aQuery) (a2aBoundaryView, error) {
	v := a2aBoundaryView{Principal: principal}
	for _, l := range [...]struct {
		name string
		list projections.A2AList
		dst  **a2aListView
	}{{listTrusted, projections.A2ATrustedAgents, &v.TrustedAgents}, {listBlocked, projections.A2ABlockedAgents, &v.BlockedAgents},
		{listPairs, projections.A2ABlockedPairs, &v.BlockedPairs}} {
		if q.list != "" && q.list != l.name {
			continue
		}
		after := ""
		if q.list == l.name {
			after = q.after
		}
		p, err := list(l.list, after)
		if err != nil {
			return v, err
		}
		*l.dst = listView(p, l.list)
	}
	return v, nil
}

// listView renders a page of list l.
func listView(p projections.A2AListPage, l projections.A2AList) *a2aListView {
	v := &a2aListView{Count: p.Count, NextAfter: encodeCursor(p.Next)}
	if l != projections.A2ABlockedPairs {
		v.Agents = p.Entries
		if v.Agents == nil {
			v.Agents = []string{}
		}
		return v
	}
	v.Pairs = make([]a2aPairView, 0, len(p.Entries))
	for _, e := range p.Entries {
		s, r, _ := projections.SplitA2APair(e)
		v.Pairs = append(v.Pairs, a2aPairView{Sender: s, Receiver: r})
	}
	return v
}

// a2aMetricsView is the answer of GET /a2a/metrics: the verdicts counted
// under a boundary (or, for scope "gate", under every one), by status and
// by engine; for a boundary, a page of its pairs and the verdicts of the
// pairs past projections.MaxA2APairsPerPrincipal (other_pairs).
type a2aMetricsView struct {
	Scope       string                              `json:"scope"`
	Total       int64                               `json:"total_intercepted"`
	Forwarded   int64                               `json:"forwarded"`
	Blocked     int64                               `json:"blocked"`
	RateLimited int64                               `json:"rate_limited"`
	Errors      int64                               `json:"errors"`
	ByEngine    map[string]projections.StatusCounts `json:"by_engine"`
	// PairsCounted is the number of pairs counted one by one; Pairs a
	// page of them; OtherPairs the verdicts of the pairs beyond.
	PairsCounted *int64                    `json:"pairs_counted,omitempty"`
	Pairs        []projections.A2APair     `json:"pairs,omitempty"`
	OtherPairs   *projections.StatusCounts `json:"other_pairs,omitempty"`
	NextAfter    *string                   `json:"next_after,omitempty"`
	AtSeq        *uint64                   `json:"at_seq,omitempty"`
	AtTime       *time.Time                `json:"at_time,omitempty"`
	// Verdict is the verdict of the event at at_seq, when it is one under
	// the boundary.
	Verdict *domain.A2AVerdict `json:"verdict,omitempty"`
}

// getA2AMetrics answers GET /a2a/metrics.
func (a *api) getA2AMetrics(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ctx := r.Context()
	q, e := parseA2AQuery(r.URL.Query())
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	scope, e := a.a2aScope(r, c, q, gateScope, false)
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	if scope == gateScope {
		if q.atSeq != 0 || q.atTime != nil || q.after != "" {
			a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "principal"},
				"the gate-wide counters have no pairs and no past: name a boundary with principal"))
			return
		}
		cnt, err := a.cfg.Store.A2AGateCounts()
		if err != nil {
			a.a2aUnavailable(w, "the A2A counters", err)
			return
		}
		writeValue(w, http.StatusOK, metricsView(gateScope, cnt))
		return
	}
	if q.atSeq != 0 || q.atTime != nil {
		past, ok := a.a2aPast(w, r, c, q, scope)
		if !ok {
			return
		}
		v := metricsView(scope, past.Counts)
		v.AtSeq, v.AtTime = &past.Seq, &past.Time
		if past.Verdict != nil {
			v.Verdict = past.Verdict.A2AVerdict
		}
		entries := make([]string, 0, len(past.Pairs))
		for k := range past.Pairs {
			entries = append(entries, projections.JoinA2APair(k[0], k[1]))
		}
		slices.Sort(entries)
		p, err := projections.PageA2AList(entries, q.after, q.limit)
		if err != nil {
			a.a2aUnavailable(w, "the A2A counters", err)
			return
		}
		for _, en := range p.Entries {
			s, rc, _ := projections.SplitA2APair(en)
			v.Pairs = append(v.Pairs, projections.A2APair{Sender: s, Receiver: rc, StatusCounts: *past.Pairs[[2]string{s, rc}]})
		}
		v.withPairs(past.Counts, p.Next)
		writeValue(w, http.StatusOK, v)
		return
	}
	cnt, err := a.cfg.Store.A2ACountsOf(scope)
	if err != nil {
		a.a2aUnavailable(w, "the A2A counters", err)
		return
	}
	var after *[2]string
	if q.after != "" {
		s, rc, ok := projections.SplitA2APair(q.after)
		if !ok {
			a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "after", "expected": "the next_after of a page"},
				"after is not the next_after of a page"))
			return
		}
		after = &[2]string{s, rc}
	}
	pairs, next, err := a.cfg.Store.A2APairs(scope, after, q.limit)
	if err != nil {
		a.a2aUnavailable(w, "the A2A counters", err)
		return
	}
	v := metricsView(scope, cnt)
	v.Pairs = pairs
	n := ""
	if next != nil {
		n = projections.JoinA2APair(next[0], next[1])
	}
	v.withPairs(cnt, n)
	writeValue(w, http.StatusOK, v)
}

// metricsView renders counters c of scope.
func metricsView(scope string, c projections.A2ACounts) *a2aMetricsView {
	v := &a2aMetricsView{Scope: scope, Total: c.Total(), Forwarded: c.Forwarded, Blocked: c.Blocked,
		RateLimited: c.RateLimited, Errors: c.Errors, ByEngine: c.ByEngine}
	if v.ByEngine == nil {
		v.ByEngine = map[string]projections.StatusCounts{}
	}
	return v
}

// withPairs completes the pair fields of a boundary's view.
func (v *a2aMetricsView) withPairs(c projections.A2ACounts, next string) {
	n, other := c.Pairs, c.Other
	v.PairsCounted, v.OtherPairs, v.NextAfter = &n, &other, encodeCursor(next)
	if v.Pairs == nil {
		v.Pairs = []projections.A2APair{}
	}
}

// a2aPast folds the log up to the event q names (at_seq or at_time) into
// the A2A state of boundary (timetravel.A2AAt); false when it answered an
// error. The log is the one holding q.sender's messages (Config.History:
// in Kafka mode, the sender's events partition; boundary changes are on
// every partition).
//
// It reads the log from its start, so it takes one of the slots of the
// compliance reports (Config.MaxConcurrentReports, shared across
// tenants as theirs): past them, 503 QWED-SYS-002 with Retry-After.
func (a *api) a2aPast(w http.ResponseWriter, r *http.Request, c *call, q a2aQuery, boundary string) (*timetravel.A2AState, bool) {
	ctx := r.Context()
	if e := a.startRender(c.creds.Principal); e != nil {
		e.err.Message = "as many reads of the log from its start (compliance reports, A2A time travel) as the instance allows are running: retry shortly"
		w.Header().Set("Retry-After", "1")
		writeJSON(w, e.status, e.body())
		return nil, false
	}
	defer a.endRender(c.creds.Principal)
	hist, err := a.history(ctx, q.sender)
	if err != nil {
		a.historyUnavailable(w, "time travel", err)
		return nil, false
	}
	defer hist.Release()
	seq := q.atSeq
	if q.atTime != nil {
		if seq, err = timetravel.SeqAtTime(ctx, hist.Log, *q.atTime); err != nil {
			a.stateError(ctx, w, c, hist.Log, "", err)
			return nil, false
		}
	}
	past, err := timetravel.A2AAt(ctx, hist.Log, boundary, seq)
	if err != nil {
		a.stateError(ctx, w, c, hist.Log, "", err)
		return nil, false
	}
	return past, true
}

// a2aUnavailable answers QWED unavailable for a read the store failed.
func (a *api) a2aUnavailable(w http.ResponseWriter, what string, err error) {
	a.log.Error("reading A2A projections", "read", what, "err", err)
	e := failure(domain.CodeUnavailable, "%s cannot be read", what)
	writeJSON(w, e.status, e.body())
}

// a2aHealthView is the answer of GET /a2a/health: public, so it says how
// the gate is configured and nothing of any tenant (no agent ids: the
// configured lists are counted, not listed).
type a2aHealthView struct {
	Status  string        `json:"status"`
	Service string        `json:"service"`
	Config  a2aConfigView `json:"config"`
}

// a2aConfigView is the A2A configuration in force.
type a2aConfigView struct {
	EnableFinancial     bool  `json:"enable_financial_verification"`
	EnableLogic         bool  `json:"enable_logic_verification"`
	EnableCode          bool  `json:"enable_code_verification"`
	BlockOnError        bool  `json:"block_on_error"`
	MaxPayloadSizeBytes int64 `json:"max_payload_size_bytes"`
	RatePerMinute       int64 `json:"rate_per_minute"`
	Burst               int64 `json:"burst"`
	IdleEvictSeconds    int64 `json:"idle_evict_seconds"`
	DefaultAllow        bool  `json:"default_allow"`
	TrustedAgents       int   `json:"trusted_agents_count"`
	BypassAgents        int   `json:"bypass_agents_count"`
}

// getA2AHealth answers GET /a2a/health (unauthenticated, like /healthz).
func (a *api) getA2AHealth(w http.ResponseWriter, _ *http.Request) {
	cfg, err := a.cfg.Store.GateConfig()
	if err != nil {
		a.a2aUnavailable(w, "the configuration", err)
		return
	}
	s := cfg.A2ASettings()
	writeValue(w, http.StatusOK, a2aHealthView{Status: "ok", Service: "qwed-a2a", Config: a2aConfigView{
		EnableFinancial: s.EnableFinancialVerification, EnableLogic: s.EnableLogicVerification, EnableCode: s.EnableCodeVerification,
		BlockOnError: s.BlockOnError, MaxPayloadSizeBytes: s.MaxPayloadSizeBytes, RatePerMinute: s.RatePerMinute, Burst: s.Burst,
		IdleEvictSeconds: int64(time.Duration(s.IdleEvict) / time.Second), DefaultAllow: s.DefaultAllow,
		TrustedAgents: len(s.TrustedAgents), BypassAgents: len(s.BypassAgents),
	}})
}

// a2aCollector serves the gate-wide A2A verdict counters on /metrics as
// agentgate_a2a_verdicts_total{status, engine}, read from the projections
// at each scrape (so both deployments count every verdict of the log,
// whichever instance answered it). No agent or principal is a label: the
// label values are the four statuses and the few engine names.
type a2aCollector struct {
	store *projections.Store
	desc  *prometheus.Desc
}

func newA2ACollector(s *projections.Store) *a2aCollector {
	return &a2aCollector{store: s, desc: prometheus.NewDesc("agentgate_a2a_verdicts_total",
		"A2A verdicts recorded in the log (every boundary), by status and engine.", []string{"status", "engine"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *a2aCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *a2aCollector) Collect(ch chan<- prometheus.Metric) {
	cnt, err := c.store.A2AGateCounts()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, engine := range sortedEngines(cnt.ByEngine) {
		s := cnt.ByEngine[engine]
		for _, v := range [...]struct {
			status a2a.Status
			n      int64
		}{{a2a.StatusForwarded, s.Forwarded}, {a2a.StatusBlocked, s.Blocked}, {a2a.StatusRateLimited, s.RateLimited}, {a2a.StatusError, s.Errors}} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(v.n), string(v.status), engine)
		}
	}
}

func sortedEngines(m map[string]projections.StatusCounts) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
