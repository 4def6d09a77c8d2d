package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
	"github.com/agentgate/agentgate/projections"
	"github.com/agentgate/agentgate/streams"
)

// agentView is the answer of GET /agents/{id}: the agent's public record
// (never its token hash or internal counters).
type agentView struct {
	AgentID       string             `json:"agent_id"`
	DID           string             `json:"did"`
	Name          string             `json:"name"`
	Type          string             `json:"type"`
	Description   string             `json:"description,omitempty"`
	PrincipalID   string             `json:"principal_id"`
	Framework     string             `json:"framework,omitempty"`
	Model         string             `json:"model,omitempty"`
	Status        string             `json:"status"`
	TrustLevel    domain.TrustLevel  `json:"trust_level"`
	CreatedAt     time.Time          `json:"created_at"`
	Permissions   domain.Permissions `json:"permissions"`
	Budget        domain.Limits      `json:"budget"`
	TotalActions  int64              `json:"total_actions"`
	DeniedActions int64              `json:"denied_actions"`
	Attestations  int64              `json:"attestations"`
}

func viewOf(ag *domain.Agent) agentView {
	return agentView{
		AgentID: ag.ID, DID: ag.DID, Name: ag.Info.Name, Type: ag.Info.Type, Description: ag.Info.Description,
		PrincipalID: ag.Info.PrincipalID, Framework: ag.Info.Framework, Model: ag.Info.Model,
		Status: ag.Status, TrustLevel: ag.Trust, CreatedAt: ag.CreatedAt, Permissions: ag.Permissions,
		Budget: ag.Budget, TotalActions: ag.TotalActions, DeniedActions: ag.DeniedActions, Attestations: ag.Attestations,
	}
}

// readAgent authenticates a read of the agent in the path: its principal's
// key, the admin key or its own token.
func (a *api) readAgent(w http.ResponseWriter, r *http.Request) (*domain.Agent, bool) {
	c := newCall(r)
	ag, e := a.readAgentFor(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return nil, false
	}
	return ag, true
}

func (a *api) readAgentFor(r *http.Request, c *call) (*domain.Agent, *apiError) {
	var e *apiError
	if c.creds, e = a.readCredentials(r); e != nil {
		return nil, e
	}
	id, e := pathValue(r, "id")
	if e != nil {
		return nil, e
	}
	ag, err := a.cfg.Store.Agent(id)
	if a.caughtUp(r.Context(), err) {
		ag, err = a.cfg.Store.Agent(id)
	}
	if errors.Is(err, projections.ErrNotFound) {
		return nil, reject(domain.CodeAgentNotRegistered, map[string]any{"agent_id": id}, "agent %q is not registered", id)
	}
	if err != nil {
		a.log.Error("reading agent", "err", err)
		return nil, failure(domain.CodeUnavailable, "the agent cannot be read")
	}
	if e := a.mayRead(c.creds, ag.Info.PrincipalID, ag.TokenHash); e != nil {
		return nil, e
	}
	return ag, nil
}

// readCredentials authenticates a read: an X-API-Key, a Bearer agent
// token, or both; neither is QWED-AUTH-001.
func (a *api) readCredentials(r *http.Request) (command.Credentials, *apiError) {
	cr, e := a.credentials(r, false, true)
	if e != nil {
		return cr, e
	}
	if cr.Principal == "" && cr.TokenHash == "" {
		return cr, reject(domain.CodeMissingAPIKey, map[string]any{"header": "X-API-Key"},
			"missing credentials: send an X-API-Key or an Authorization: Bearer agent token")
	}
	return cr, nil
}

// mayRead grants a read of a resource of principal (and of the agent with
// tokenHash) to cr.
func (a *api) mayRead(cr command.Credentials, principal, tokenHash string) *apiError {
	if cr.Principal == domain.AdminPrincipal || (cr.Principal != "" && cr.Principal == principal) {
		return nil
	}
	if command.EqualHash(cr.TokenHash, tokenHash) {
		return nil
	}
	if cr.Principal != "" {
		return reject(domain.CodeForbidden, nil, "the API key's principal has no access to this resource")
	}
	return reject(domain.CodeInvalidAgentToken, nil, "invalid agent token for this resource")
}

func (a *api) getAgent(w http.ResponseWriter, r *http.Request) {
	if ag, ok := a.readAgent(w, r); ok {
		writeValue(w, http.StatusOK, viewOf(ag))
	}
}

// budgetView is the answer of GET /agents/{id}/budget (QWED-Agent spec v1.1 §6.1).
type budgetView struct {
	AgentID string              `json:"agent_id"`
	Budget  domain.BudgetStatus `json:"budget"`
}

func (a *api) getBudget(w http.ResponseWriter, r *http.Request) {
	if ag, ok := a.readAgent(w, r); ok {
		writeValue(w, http.StatusOK, budgetView{AgentID: ag.ID, Budget: ag.BudgetView(a.cfg.Clock())})
	}
}

// activityView is the answer of GET /agents/{id}/activity (QWED-Agent spec v1.1 §7.2).
type activityView struct {
	AgentID    string                 `json:"agent_id"`
	Period     period                 `json:"period"`
	Summary    projections.Summary    `json:"summary"`
	Activities []projections.Activity `json:"activities"`
	// NextAfterSeq is the after_seq of the next page, null on the last.
	NextAfterSeq *uint64 `json:"next_after_seq"`
}

type period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

func (a *api) getActivity(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ag, e := a.readAgentFor(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	q, e := parseActivityQuery(r.URL.Query(), a.cfg.Clock())
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	page, err := a.cfg.Store.Activity(ag.ID, q.from, q.to, q.afterSeq, q.limit, projections.MaxPageBytes)
	if err != nil {
		a.log.Error("reading activity", "err", err)
		e := failure(domain.CodeUnavailable, "the activity cannot be read")
		writeJSON(w, e.status, e.body())
		return
	}
	v := activityView{AgentID: ag.ID, Period: period{q.from, q.to}, Summary: page.Summary, Activities: page.Activities}
	if page.NextAfterSeq != 0 {
		n := page.NextAfterSeq
		v.NextAfterSeq = &n
	}
	writeValue(w, http.StatusOK, v)
}

type activityQuery struct {
	from, to time.Time
	afterSeq uint64
	limit    int
}

// parseActivityQuery reads from, to (RFC 3339 or YYYY-MM-DD, UTC midnight),
// limit and after_seq. The period is [from, to). to defaults to now,
// rounded up to the next whole second so that everything recorded until
// now is in it; from defaults to DefaultActivityPeriod before to.
func parseActivityQuery(q url.Values, now time.Time) (activityQuery, *apiError) {
	out := activityQuery{to: now.UTC().Truncate(time.Second).Add(time.Second), limit: DefaultListLimit}
	var e *apiError
	if s := q.Get("to"); s != "" {
		if out.to, e = parseTime("to", s); e != nil {
			return out, e
		}
	}
	out.from = out.to.Add(-DefaultActivityPeriod)
	if s := q.Get("from"); s != "" {
		if out.from, e = parseTime("from", s); e != nil {
			return out, e
		}
	}
	if !out.from.Before(out.to) {
		return out, reject(domain.CodeInvalidRequest, map[string]any{"field": "from"}, "from must be before to")
	}
	if out.to.Sub(out.from) > MaxActivityPeriod {
		return out, reject(domain.CodeInvalidRequest, map[string]any{"field": "from", "max_days": int64(MaxActivityPeriod / (24 * time.Hour))},
			"the period is longer than %d days", int64(MaxActivityPeriod/(24*time.Hour)))
	}
	if out.limit, e = parseLimit(q); e != nil {
		return out, e
	}
	if s := q.Get("after_seq"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return out, reject(domain.CodeInvalidRequest, map[string]any{"field": "after_seq", "expected": "integer"},
				"after_seq must be a non-negative integer")
		}
		out.afterSeq = n
	}
	return out, nil
}

// parseTime reads an RFC 3339 time or a YYYY-MM-DD date (UTC midnight).
func parseTime(field, s string) (time.Time, *apiError) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, reject(domain.CodeInvalidRequest, map[string]any{"field": field, "expected": "RFC 3339 time or YYYY-MM-DD"},
		"%s must be an RFC 3339 time or a YYYY-MM-DD date", field)
}

// parseLimit reads the limit parameter: 1..MaxListLimit, DefaultListLimit
// when absent.
func parseLimit(q url.Values) (int, *apiError) {
	s := q.Get("limit")
	if s == "" {
		return DefaultListLimit, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxListLimit {
		return 0, reject(domain.CodeInvalidRequest, map[string]any{"field": "limit", "expected": "integer", "max": MaxListLimit},
			"limit must be an integer from 1 to %d", MaxListLimit)
	}
	return n, nil
}

// parsePage reads the page of a list: limit (parseLimit) and after, a
// cursor of at most MaxPathIDBytes.
func parsePage(q url.Values) (limit int, after string, e *apiError) {
	if limit, e = parseLimit(q); e != nil {
		return 0, "", e
	}
	after = q.Get("after")
	if len(after) > MaxPathIDBytes {
		return 0, "", reject(domain.CodeInvalidRequest, map[string]any{"field": "after", "max_bytes": MaxPathIDBytes},
			"after is longer than %d bytes", MaxPathIDBytes)
	}
	return limit, after, nil
}

// approvalsView is the answer of GET /approvals.
type approvalsView struct {
	Approvals []domain.Approval `json:"approvals"`
	// NextAfter is the after of the next page, null on the last.
	NextAfter *string `json:"next_after"`
}

func (a *api) listApprovals(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	q := r.URL.Query()
	status := domain.ApprovalStatus(q.Get("status"))
	switch status {
	case "", domain.ApprovalPending, domain.ApprovalApproved, domain.ApprovalDenied, domain.ApprovalExpired:
	default:
		a.fail(r.Context(), w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "status"},
			"status must be pending, approved, denied or expired"))
		return
	}
	limit, after, e := parsePage(q)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	list, next, err := a.cfg.Store.Approvals(c.creds.Principal, status, after, limit, projections.MaxPageBytes)
	if err != nil {
		a.log.Error("reading approvals", "err", err)
		e := failure(domain.CodeUnavailable, "the approvals cannot be read")
		writeJSON(w, e.status, e.body())
		return
	}
	if list == nil {
		list = []domain.Approval{}
	}
	v := approvalsView{Approvals: list}
	if next != "" {
		v.NextAfter = &next
	}
	writeValue(w, http.StatusOK, v)
}

func (a *api) getApproval(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ap, e := a.readApproval(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	writeValue(w, http.StatusOK, ap)
}

// readApproval authenticates a read of the approval in the path: its
// principal's key, the admin key, or the token of the agent it concerns
// (the agent reads the outcome).
func (a *api) readApproval(r *http.Request, c *call) (*domain.Approval, *apiError) {
	var e *apiError
	if c.creds, e = a.readCredentials(r); e != nil {
		return nil, e
	}
	id, e := pathValue(r, "id")
	if e != nil {
		return nil, e
	}
	ap, err := a.cfg.Store.Approval(id)
	if a.caughtUp(r.Context(), err) {
		ap, err = a.cfg.Store.Approval(id)
	}
	if errors.Is(err, projections.ErrNotFound) {
		return nil, reject(domain.CodeNotFound, map[string]any{"approval_id": id}, "approval %q not found", id)
	}
	if err != nil {
		a.log.Error("reading approval", "err", err)
		return nil, failure(domain.CodeUnavailable, "the approval cannot be read")
	}
	var tokenHash string
	if c.creds.TokenHash != "" {
		ag, err := a.cfg.Store.Agent(ap.AgentID)
		switch {
		case err == nil:
			tokenHash = ag.TokenHash
		case !errors.Is(err, projections.ErrNotFound):
			a.log.Error("reading agent", "err", err)
			return nil, failure(domain.CodeUnavailable, "the approval's agent cannot be read")
		}
	}
	if e := a.mayRead(c.creds, ap.PrincipalID, tokenHash); e != nil {
		return nil, e
	}
	return ap, nil
}

// healthView is the answer of GET /healthz.
type healthView struct {
	Status string `json:"status"`
	Seq    uint64 `json:"seq"`
}

func (a *api) healthz(w http.ResponseWriter, _ *http.Request) {
	ck, err := a.cfg.Store.Checkpoint()
	if err != nil {
		a.log.Error("reading the checkpoint", "err", err)
		e := failure(domain.CodeUnavailable, "the projections cannot be read")
		writeJSON(w, e.status, e.body())
		return
	}
	writeValue(w, http.StatusOK, healthView{Status: "ok", Seq: ck.Seq})
}

// emptyJWKS is served when Config.JWKS is nil.
var emptyJWKS = []byte(`{"keys":[]}`)

func (a *api) jwks(w http.ResponseWriter, _ *http.Request) {
	b := emptyJWKS
	if a.cfg.JWKS != nil {
		if k := a.cfg.JWKS(); len(k) > 0 {
			b = k
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(withNewline(b))
}

// getState answers GET /agents/{id}/state?at_seq=N or ?at_time=T (issue 5):
// the agent as it was right after event N was decided (or the last event
// at or before T), computed from the nearest projection snapshot and the
// log (timetravel.AgentStateAt). Reads are authenticated as GET /agents/{id};
// without Config.Log or Config.History the answer is QWED unavailable.
func (a *api) getState(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ag, e := a.readAgentFor(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	ctx := r.Context()
	hist, err := a.history(ctx, ag.ID)
	if err != nil {
		a.historyUnavailable(w, "time travel", err)
		return
	}
	defer hist.Release()
	log := hist.Log
	seq, at, e := parsePosition(r.URL.Query())
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	if at != nil {
		n, err := timetravel.SeqAtTime(ctx, log, *at)
		if err != nil {
			a.stateError(ctx, w, c, log, ag.ID, err)
			return
		}
		seq = n
	}
	st, err := timetravel.AgentStateAt(ctx, log, hist.Snapshots, ag.ID, seq)
	if err != nil {
		a.stateError(ctx, w, c, log, ag.ID, err)
		return
	}
	writeValue(w, http.StatusOK, st.View())
}

// parsePosition reads a past position: exactly one of at_seq (a
// positive seq) and at_time (an RFC 3339 time or a date, returned as at).
func parsePosition(q url.Values) (seq uint64, at *time.Time, e *apiError) {
	seqText, timeText := q.Get("at_seq"), q.Get("at_time")
	if (seqText == "") == (timeText == "") || len(q["at_seq"]) > 1 || len(q["at_time"]) > 1 {
		return 0, nil, reject(domain.CodeInvalidRequest, map[string]any{"field": "at_seq"},
			"give exactly one of at_seq (a log position) or at_time (an RFC 3339 time)")
	}
	if timeText != "" {
		t, e := parseTime("at_time", timeText)
		return 0, &t, e
	}
	n, err := strconv.ParseUint(seqText, 10, 64)
	if err != nil || n == 0 {
		return 0, nil, reject(domain.CodeInvalidRequest, map[string]any{"field": "at_seq", "expected": "positive integer"},
			"at_seq must be a positive integer")
	}
	return n, nil, nil
}

// errNoHistory: the instance reads no event log.
var errNoHistory = errors.New("this instance reads no event log")

// history opens where an agent's history is read from (Config.History,
// else Config.Log and Config.Store).
func (a *api) history(ctx context.Context, agentID string) (*agentHistory, error) {
	if a.cfg.History != nil {
		lg, p, err := a.cfg.History(ctx, agentID)
		if err != nil {
			return nil, err
		}
		return &agentHistory{Log: lg, Partition: p, Release: func() { _ = lg.Close() }}, nil
	}
	if a.cfg.Log == nil {
		return nil, errNoHistory
	}
	return &agentHistory{Log: a.cfg.Log, Snapshots: a.cfg.Store, Release: func() {}}, nil
}

// historyUnavailable answers QWED unavailable for a read of the log that
// cannot be served.
func (a *api) historyUnavailable(w http.ResponseWriter, what string, err error) {
	if !errors.Is(err, errNoHistory) {
		a.log.Error("opening the event log", "read", what, "err", err)
	}
	e := failure(domain.CodeUnavailable, "%s needs the event log, which this instance cannot read now", what)
	writeJSON(w, e.status, e.body())
}

// stateError maps the errors of time travel.
func (a *api) stateError(ctx context.Context, w http.ResponseWriter, c *call, log streams.Log, agentID string, err error) {
	switch {
	case errors.Is(err, timetravel.ErrBeyondHead):
		head := log.Head().Seq
		a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "at_seq", "head_seq": head},
			"the position is not in the log (head is seq %d)", head))
	case errors.Is(err, timetravel.ErrNotRegisteredAt):
		a.fail(ctx, w, c, reject(domain.CodeNotFound, map[string]any{"agent_id": agentID},
			"agent %q was not registered at that position", agentID))
	default:
		a.log.Error("computing the agent's past state", "err", err)
		e := failure(domain.CodeUnavailable, "the agent's past state cannot be computed")
		writeJSON(w, e.status, e.body())
	}
}
