package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/history/timetravel"
	"github.com/agentgate/agentgate/projections"
)

// The reads of a consumer's transactions (the Agent Policy Engine spec
// §3.3): GET /transactions, GET /transactions/{id}, GET
// /transactions/summary and GET /transactions/analytics.
// docs/ARCHITECTURE.md, "Reads: transactions, summaries, analytics,
// backtest".

// Named limits of the transaction reads.
const (
	// DefaultSummaryPeriod is how far before "to" a summary without
	// "from" starts.
	DefaultSummaryPeriod = 30 * 24 * time.Hour
	// MaxSummaryPeriod bounds the period of one summary or analytics read.
	MaxSummaryPeriod = 366 * 24 * time.Hour
	// MaxSummaryTransactions bounds the transactions one summary or
	// analytics read folds: a period holding more is refused (narrow it).
	MaxSummaryTransactions = 200_000
)

// transactionRoutes registers the transaction reads.
func (a *api) transactionRoutes() {
	a.handle("GET /transactions", a.listTransactions)
	a.handle("GET /transactions/summary", a.getTransactionSummary)
	a.handle("GET /transactions/analytics", a.getTransactionAnalytics)
	a.handle("GET /transactions/{id}", a.getTransaction)
}

// txStatuses are the statuses a filter may name.
var txStatuses = []string{domain.TxExecuting, domain.TxBlocked, domain.TxPendingApproval, domain.TxQueued, domain.TxCompleted,
	domain.TxFailed, domain.TxPendingConfirmation, domain.TxDenied, domain.TxExpired}

// consumerScope authenticates a transaction read (an API key: the
// transactions are the consumer's, the principal of its agents) and
// returns the consumer it reads: the key's principal, or the one the
// admin key names with ?consumer= (required of it). A principal naming
// another consumer is refused.
func (a *api) consumerScope(r *http.Request, c *call, q url.Values) (string, *apiError) {
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		return "", e
	}
	if len(q["consumer"]) > 1 {
		return "", reject(domain.CodeInvalidRequest, map[string]any{"field": "consumer", "expected": "one value"}, "consumer is given more than once")
	}
	p, named := c.creds.Principal, q.Get("consumer")
	if _, ok := q["consumer"]; ok && !validID(named) {
		return "", reject(domain.CodeInvalidRequest, map[string]any{"field": "consumer", "expected": "an identifier"},
			"consumer must be 1-%d bytes without control characters", MaxPathIDBytes)
	}
	switch {
	case p == domain.AdminPrincipal && named == "":
		return "", reject(domain.CodeMissingField, map[string]any{"field": "consumer"}, "the admin key reads one consumer's transactions: name it with consumer")
	case p == domain.AdminPrincipal:
		return named, nil
	case named == "" || named == p:
		return p, nil
	}
	return "", reject(domain.CodeForbidden, map[string]any{"field": "consumer"}, "the API key's principal reads only its own transactions")
}

// txQuery is the filter of the transaction reads.
type txQuery struct {
	filter projections.TxFilter
	after  string
	limit  int
	period string
}

// parseTxQuery reads agent, business, category, status, from, to, limit,
// after and (summary) period; with defaultPeriod, the period is bounded:
// to defaults to now and from to defaultPeriod before it, at most
// MaxSummaryPeriod apart.
func parseTxQuery(q url.Values, now time.Time, defaultPeriod time.Duration) (txQuery, *apiError) {
	var out txQuery
	bad := func(field, expected, format string, args ...any) (txQuery, *apiError) {
		return out, reject(domain.CodeInvalidRequest, map[string]any{"field": field, "expected": expected}, format, args...)
	}
	for _, f := range [...]string{"agent", "business", "category", "status", "from", "to", "limit", "after", "period"} {
		if len(q[f]) > 1 {
			return bad(f, "one value", "%s is given more than once", f)
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"agent", &out.filter.Agent}, {"business", &out.filter.Business}, {"category", &out.filter.Category}} {
		v := q.Get(f.name)
		if _, ok := q[f.name]; ok && !validID(v) {
			return bad(f.name, "an identifier", "%s must be 1-%d bytes without control characters", f.name, MaxPathIDBytes)
		}
		*f.dst = v
	}
	if s := q.Get("status"); s != "" {
		ok := false
		for _, st := range txStatuses {
			ok = ok || st == s
		}
		if !ok {
			return bad("status", "a transaction status", "status '%s' is not a transaction status", s)
		}
		out.filter.Status = s
	}
	var e *apiError
	if s := q.Get("to"); s != "" {
		if out.filter.To, e = parseTime("to", s); e != nil {
			return out, e
		}
	}
	if s := q.Get("from"); s != "" {
		if out.filter.From, e = parseTime("from", s); e != nil {
			return out, e
		}
	}
	if defaultPeriod > 0 {
		if out.filter.To.IsZero() {
			out.filter.To = now.UTC().Truncate(time.Second).Add(time.Second)
		}
		if out.filter.From.IsZero() {
			out.filter.From = out.filter.To.Add(-defaultPeriod)
		}
		if out.filter.To.Sub(out.filter.From) > MaxSummaryPeriod {
			return out, reject(domain.CodeInvalidRequest, map[string]any{"field": "from", "max_days": int64(MaxSummaryPeriod / (24 * time.Hour))},
				"the period is longer than %d days", int64(MaxSummaryPeriod/(24*time.Hour)))
		}
	}
	if !out.filter.From.IsZero() && !out.filter.To.IsZero() && !out.filter.From.Before(out.filter.To) {
		return bad("from", "before to", "from must be before to")
	}
	if out.limit, e = parseLimit(q); e != nil {
		return out, e
	}
	out.after = q.Get("after")
	out.period = q.Get("period")
	return out, nil
}

// transactionsView is the answer of GET /transactions.
type transactionsView struct {
	Consumer     string                    `json:"consumer"`
	Transactions []projections.Transaction `json:"transactions"`
	// NextAfter is the after of the next page, null on the last.
	NextAfter *string `json:"next_after"`
}

// listTransactions answers GET /transactions: the consumer's transactions,
// newest first, filtered and paged.
func (a *api) listTransactions(w http.ResponseWriter, r *http.Request) {
	c, q, consumer, ok := a.txRead(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	tq, e := parseTxQuery(q, a.cfg.Clock(), 0)
	if e == nil && tq.period != "" {
		e = reject(domain.CodeInvalidRequest, map[string]any{"field": "period"}, "period is a parameter of the summary only")
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	page, err := a.cfg.Store.Transactions(consumer, tq.filter, tq.after, tq.limit)
	switch {
	case errors.Is(err, projections.ErrBadCursor):
		a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "after", "expected": "the next_after of a page"},
			"after is not the next_after of a page"))
		return
	case err != nil:
		a.txUnavailable(w, err)
		return
	}
	v := transactionsView{Consumer: consumer, Transactions: page.Transactions}
	if v.Transactions == nil {
		v.Transactions = []projections.Transaction{}
	}
	if page.Next != "" {
		v.NextAfter = &page.Next
	}
	writeValue(w, http.StatusOK, v)
}

// getTransaction answers GET /transactions/{id}: one of the consumer's
// transactions; another consumer's is not found (404), as for an unknown
// id, so that ids of other tenants are not confirmed.
func (a *api) getTransaction(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	ctx := r.Context()
	q := r.URL.Query()
	var (
		consumer string
		e        *apiError
	)
	if c.creds, e = a.credentials(r, true, false); e == nil {
		if c.creds.Principal == domain.AdminPrincipal && q.Get("consumer") == "" {
			consumer = domain.AdminPrincipal // the admin reads any transaction by id
		} else {
			consumer, e = a.consumerScope(r, c, q)
		}
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	id := r.PathValue("id")
	if !validID(id) {
		a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "id"}, "the transaction id must be 1-%d bytes without control characters", MaxPathIDBytes))
		return
	}
	if q.Has("at_seq") || q.Has("at_time") {
		a.transactionAt(w, r, c, consumer, id)
		return
	}
	tx, err := a.cfg.Store.Transaction(consumer, id)
	if a.caughtUp(ctx, err) {
		tx, err = a.cfg.Store.Transaction(consumer, id)
	}
	switch {
	case errors.Is(err, projections.ErrNotFound):
		a.fail(ctx, w, c, reject(domain.CodeNotFound, map[string]any{"transaction_id": id}, "no transaction '%s'", id))
		return
	case err != nil:
		a.txUnavailable(w, err)
		return
	}
	writeValue(w, http.StatusOK, tx)
}

// summaryView is the answer of GET /transactions/summary.
type summaryView struct {
	Consumer string    `json:"consumer"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	projections.TxSummaryView
}

// foldPeriod folds the consumer's transactions of the query's period
// that match its filter into fn, refusing a period of more than
// MaxSummaryTransactions.
func (a *api) foldPeriod(consumer string, tq txQuery, fn func(*projections.Transaction)) *apiError {
	err := a.cfg.Store.ScanTransactions(consumer, tq.filter.From, tq.filter.To, MaxSummaryTransactions, func(t *projections.Transaction) error {
		if tq.filter.Match(t) {
			fn(t)
		}
		return nil
	})
	switch {
	case errors.Is(err, projections.ErrTooMany):
		return reject(domain.CodeInvalidRequest, map[string]any{"field": "from", "max_transactions": MaxSummaryTransactions},
			"the period holds more than %d transactions: narrow it", MaxSummaryTransactions)
	case err != nil:
		a.log.Error("reading transactions", "err", err)
		return failure(domain.CodeUnavailable, "the transactions cannot be read")
	}
	return nil
}

// getTransactionSummary answers GET /transactions/summary: the totals of
// the consumer's transactions in the period (default the last 30 days),
// per period bucket (period=day|week|month, default day), agent, business
// and category.
func (a *api) getTransactionSummary(w http.ResponseWriter, r *http.Request) {
	c, q, consumer, ok := a.txRead(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	tq, e := parseTxQuery(q, a.cfg.Clock(), DefaultSummaryPeriod)
	if e == nil && (tq.after != "" || q.Has("limit")) {
		e = reject(domain.CodeInvalidRequest, map[string]any{"field": "after"}, "a summary is not paged: it has no after or limit")
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	if tq.period == "" {
		tq.period = projections.PeriodDay
	}
	sum, err := projections.NewTxSummary(tq.period)
	if err != nil {
		a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "period", "expected": "day, week or month"}, "%v", err))
		return
	}
	if e := a.foldPeriod(consumer, tq, sum.Add); e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	writeValue(w, http.StatusOK, summaryView{Consumer: consumer, From: tq.filter.From, To: tq.filter.To, TxSummaryView: sum.View()})
}

// txRead begins a read of a consumer's transactions: its call, query and
// consumer (consumerScope); ok false when it was refused (and answered).
func (a *api) txRead(w http.ResponseWriter, r *http.Request) (c *call, q url.Values, consumer string, ok bool) {
	c, q = newCall(r), r.URL.Query()
	consumer, e := a.consumerScope(r, c, q)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return c, q, "", false
	}
	return c, q, consumer, true
}

// txUnavailable answers a failed read of the transactions.
func (a *api) txUnavailable(w http.ResponseWriter, err error) {
	a.log.Error("reading transactions", "err", err)
	e := failure(domain.CodeUnavailable, "the transactions cannot be read")
	writeJSON(w, e.status, e.body())
}

// transactionAtView is the answer of GET /transactions/{id}?at_seq=: the
// transaction as it stood right after the event at_seq.
type transactionAtView struct {
	projections.Transaction
	AtSeq  uint64    `json:"at_seq"`
	AtTime time.Time `json:"at_time"`
}

// transactionAt answers GET /transactions/{id} with at_seq or at_time:
// the transaction as of that event, folded from the log (the consumer's
// home partition in Kafka mode), which takes one of the slots of the
// reads of the log from its start (MaxConcurrentReports).
func (a *api) transactionAt(w http.ResponseWriter, r *http.Request, c *call, consumer, id string) {
	ctx := r.Context()
	seq, at, e := parsePosition(r.URL.Query())
	if e == nil && consumer == domain.AdminPrincipal {
		e = reject(domain.CodeMissingField, map[string]any{"field": "consumer"},
			"a read of the past names the consumer whose log holds the transaction: add consumer")
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	if e := a.startRender(c.creds.Principal); e != nil {
		e.err.Message = "as many reads of the log from its start (compliance reports, time travel) as the instance allows are running: retry shortly"
		w.Header().Set("Retry-After", "1")
		writeJSON(w, e.status, e.body())
		return
	}
	defer a.endRender(c.creds.Principal)
	// A consumer's executes are all decided on its home partition: the
	// history keyed as the consumer's home is that partition's log.
	hist, err := a.history(ctx, domain.HomeKey(consumer))
	if err != nil {
		a.historyUnavailable(w, "time travel", err)
		return
	}
	defer hist.Release()
	if at != nil {
		if seq, err = timetravel.SeqAtTime(ctx, hist.Log, *at); err != nil {
			a.stateError(ctx, w, c, hist.Log, "", err)
			return
		}
	}
	past, err := timetravel.TransactionAt(ctx, hist.Log, consumer, id, seq)
	switch {
	case errors.Is(err, timetravel.ErrNoTransactionAt):
		a.fail(ctx, w, c, reject(domain.CodeNotFound, map[string]any{"transaction_id": id, "at_seq": seq}, "no transaction '%s' at seq %d", id, seq))
		return
	case err != nil:
		a.stateError(ctx, w, c, hist.Log, "", err)
		return
	}
	writeValue(w, http.StatusOK, transactionAtView{Transaction: past.Transaction, AtSeq: past.Seq, AtTime: past.Time})
}

// analyticsView is the answer of GET /transactions/analytics: the
// analysis of the consumer's spends in one currency (policy.Analyze: the
// method is documented there), and the recommended policies as a policy
// file for agentgate backtest --policy-file, which re-decides the
// recorded executes under them.
type analyticsView struct {
	Consumer string    `json:"consumer"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Currency string    `json:"currency"`
	TimeZone string    `json:"time_zone"`
	policy.Analysis
	Backtest analyticsBacktest `json:"backtest_policy_file"`
}

// analyticsBacktest is a policy file of agentgate backtest.
type analyticsBacktest struct {
	Put []policy.Policy `json:"put"`
}

// getTransactionAnalytics answers GET /transactions/analytics: spending
// trends per day and week, anomaly flags and recommended spending limits
// from the consumer's transactions that reserved spend in the period
// (default the last 30 days), in one currency (?currency=, required when
// the period has several) and a time zone (?time_zone=, IANA, default
// UTC) for the days.
func (a *api) getTransactionAnalytics(w http.ResponseWriter, r *http.Request) {
	c, q, consumer, ok := a.txRead(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	cur, zone := q.Get("currency"), q.Get("time_zone")
	q.Del("currency")
	q.Del("time_zone")
	tq, e := parseTxQuery(q, a.cfg.Clock(), DefaultSummaryPeriod)
	switch {
	case e != nil:
	case tq.after != "" || q.Has("limit") || tq.period != "" || tq.filter.Status != "":
		e = reject(domain.CodeInvalidRequest, map[string]any{"field": "after"}, "the analytics take agent, business, category, from, to, currency and time_zone only")
	case cur != "" && (len(cur) != 3 || strings.ToUpper(cur) != cur):
		e = reject(domain.CodeInvalidRequest, map[string]any{"field": "currency", "expected": "an ISO 4217 code"}, "currency must be three upper-case letters")
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	loc, err := policy.LoadZone(zone)
	if err != nil || len(zone) > policy.MaxTimeZoneChars {
		a.fail(ctx, w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "time_zone", "expected": "an IANA time zone"}, "time_zone %q is not an IANA time zone", zone))
		return
	}
	byCur := map[string][]policy.Spend{}
	e = a.foldPeriod(consumer, tq, func(t *projections.Transaction) {
		if projections.TxStatusClass(t.Status) == "refused" {
			return
		}
		byCur[t.Currency] = append(byCur[t.Currency], policy.Spend{TransactionID: t.ID, At: t.CreatedAt, AgentID: t.AgentID, BusinessID: t.BusinessID, AmountCents: t.AmountCents})
	})
	if e == nil && cur == "" {
		switch len(byCur) {
		case 0:
			cur = "USD"
		case 1:
			for k := range byCur {
				cur = k
			}
		default:
			e = reject(domain.CodeMissingField, map[string]any{"field": "currency"}, "the period holds spends in %d currencies: name one with currency", len(byCur))
		}
	}
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	v := analyticsView{Consumer: consumer, From: tq.filter.From, To: tq.filter.To, Currency: cur, TimeZone: loc.String(),
		Analysis: policy.Analyze(byCur[cur], loc, tq.filter.From, tq.filter.To), Backtest: analyticsBacktest{Put: []policy.Policy{}}}
	for _, rec := range v.Recommendations {
		v.Backtest.Put = append(v.Backtest.Put, rec.Policy)
	}
	writeValue(w, http.StatusOK, v)
}
