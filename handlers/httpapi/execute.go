package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
)

// The consumer policy engine's endpoints (the Agent Policy Engine spec
// §2, §3.3): an agent's execute through the gate and its confirmation
// token, the business registry and the consumer's policies. The writes
// are commands like every other (built by package command, decided by the
// partition's worker, recorded, answered from the recorded event), under
// the edge limit Config.ExecuteRateLimit.

// MaxExecuteEnvelopeBytes is the room of an execute's or a prepare's
// body besides its request object (businessId, the members' names).
const MaxExecuteEnvelopeBytes = 4 << 10

// executeBodyLimit bounds the body of POST /agp/execute and
// POST /agp/execute/prepare: the request object's bound
// (domain.MaxExecuteRequestBytes) and the envelope's.
const executeBodyLimit = domain.MaxExecuteRequestBytes + MaxExecuteEnvelopeBytes

// MaxConfirmationTokenBytes bounds the X-Confirmation-Token header (the
// gate mints 51 characters).
const MaxConfirmationTokenBytes = 256

// executeRoutes registers the consumer policy engine's endpoints.
func (a *api) executeRoutes() {
	limited := writeOptions{admit: a.executeAdmit}
	bounded := writeOptions{admit: a.executeAdmit, maxBody: executeBodyLimit}
	a.handle("POST /agp/execute/prepare", a.writeWith(command.PrepareExecute, a.executeInput, bounded))
	a.handle("POST /agp/execute", a.writeWith(command.Execute, a.executeInput, writeOptions{
		admit: a.executeAdmit, maxBody: executeBodyLimit, settle: a.awaitOutcome,
	}))
	a.handle("POST /businesses", a.writeWith(command.CreateBusiness, nil, limited))
	a.handle("GET /businesses", a.listBusinesses)
	a.handle("GET /businesses/{id}", a.getBusiness)
	a.handle("PUT /businesses/{id}", a.writeWith(command.UpdateBusiness, businessPath, limited))
	a.handle("DELETE /businesses/{id}", a.writeWith(command.DeleteBusiness, businessPath, limited))
	a.policyRoutes()
}

// executeAdmit applies the edge limit of the consumer policy engine's
// writes (Config.ExecuteRateLimit) to the request's credential.
func (a *api) executeAdmit(w http.ResponseWriter, c *call) *apiError {
	return a.admitCredential(a.execLimiter, w, c)
}

// executeInput is the input of POST /agp/execute and POST
// /agp/execute/prepare besides the body: the X-Confirmation-Token header
// (the Agent Policy Engine spec §2.2; only its hash leaves the edge), the
// X-Agent-ID header (the agent, when the body's agent_id does not name it:
// an agent token alone does not) and the gate's execute mode (in confirm
// and strict a body that does not decode is §2.4's refusal).
func (a *api) executeInput(r *http.Request) (command.Input, *apiError) {
	agent := r.Header.Get("X-Agent-ID")
	if len(agent) > MaxPathIDBytes {
		return command.Input{}, reject(domain.CodeInvalidRequest, map[string]any{"header": "X-Agent-ID", "max_bytes": MaxPathIDBytes},
			"X-Agent-ID is longer than %d bytes", MaxPathIDBytes)
	}
	tok := r.Header.Get("X-Confirmation-Token")
	if len(tok) > MaxConfirmationTokenBytes {
		return command.Input{}, reject(domain.CodeInvalidRequest, map[string]any{"header": "X-Confirmation-Token", "max_bytes": MaxConfirmationTokenBytes},
			"X-Confirmation-Token is longer than %d bytes", MaxConfirmationTokenBytes)
	}
	return command.Input{AgentID: agent, ConfirmationToken: tok, ExecuteMode: a.cfg.ExecuteMode}, nil
}

func businessPath(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	return command.Input{BusinessID: id}, e
}

// awaitOutcome answers an execute the gate decided "executing" with the
// business's outcome: it waits until the read side holds the transaction
// in another status (the adapter recorded the business's answer), within
// what is left of the request timeout, and renders it. Past that the
// answer stays 202 {transactionId, status: "executing"}; the agent reads
// the outcome later (GET /transactions/{id}), or retries with the same
// Idempotency-Key, which waits again.
func (a *api) awaitOutcome(ctx context.Context, deadline time.Time, ev *domain.Event, status int, body []byte) (int, []byte) {
	tx := ev.Transaction
	if ev.Type != domain.EvExecuteDecided || tx == nil || tx.Status != domain.TxExecuting {
		return status, body
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	got, err := a.cfg.Store.AwaitTransaction(ctx, tx.Consumer, tx.ID)
	if err != nil {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			a.log.Error("awaiting a transaction's outcome", "transaction", tx.ID, "err", err)
		}
		return status, body
	}
	st, b, rerr := renderOutcome(&got)
	if rerr != nil {
		a.log.Error("rendering a transaction's outcome", "transaction", tx.ID, "err", rerr)
		return status, body
	}
	return st, b
}

// renderOutcome renders a transaction the read side holds after its
// execute was decided executing, as the reply to the execute: what
// domain.Reply answers for an execute.completed event of it (200 with the
// business's status and data, or the error of a failed call).
func renderOutcome(tx *projections.Transaction) (int, []byte, error) {
	status, body := domain.Reply(&domain.Event{Type: domain.EvExecuteCompleted, Transaction: &tx.Transaction, Error: tx.Error})
	b, err := json.Marshal(body)
	return status, b, err
}

// businessView is a business as GET /businesses answers it. Its endpoint
// and owner are shown to the owner and the admin only: the registry is
// shared (any consumer's agents execute at a business through the gate),
// but an agent that knew the endpoint could call the business around the
// gate, and the owner is another tenant's id.
type businessView struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Categories []string `json:"categories"`
	Currency   string   `json:"currency"`
	Endpoint   string   `json:"endpoint,omitempty"`
	Owner      string   `json:"owner,omitempty"`
}

// businessViewFor is b as principal may see it.
func businessViewFor(b *domain.Business, principal string) businessView {
	v := businessView{ID: b.ID, Name: b.Name, Categories: b.Categories, Currency: b.Currency}
	if v.Categories == nil {
		v.Categories = []string{}
	}
	if principal == domain.AdminPrincipal || principal == b.Owner {
		v.Endpoint, v.Owner = b.Endpoint, b.Owner
	}
	return v
}

// businessesView is the answer of GET /businesses.
type businessesView struct {
	Businesses []businessView `json:"businesses"`
	// NextAfter is the after of the next page, null on the last.
	NextAfter *string `json:"next_after"`
}

// listBusinesses answers GET /businesses?after=&limit= for an API key: a
// page of the registry in id order.
func (a *api) listBusinesses(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	q := r.URL.Query()
	limit, e := parseLimit(q)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	after := q.Get("after")
	if len(after) > MaxPathIDBytes {
		a.fail(r.Context(), w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "after", "max_bytes": MaxPathIDBytes},
			"after is longer than %d bytes", MaxPathIDBytes))
		return
	}
	list, next, err := a.cfg.Store.Businesses(after, limit)
	if err != nil {
		a.log.Error("reading businesses", "err", err)
		e := failure(domain.CodeUnavailable, "the business registry cannot be read")
		writeJSON(w, e.status, e.body())
		return
	}
	v := businessesView{Businesses: make([]businessView, len(list))}
	for i := range list {
		v.Businesses[i] = businessViewFor(&list[i], c.creds.Principal)
	}
	if next != "" {
		v.NextAfter = &next
	}
	writeValue(w, http.StatusOK, v)
}

// getBusiness answers GET /businesses/{id} for an API key.
func (a *api) getBusiness(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	id, e := pathValue(r, "id")
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	b, err := a.cfg.Store.Business(id)
	if a.caughtUp(r.Context(), err) {
		b, err = a.cfg.Store.Business(id)
	}
	switch {
	case errors.Is(err, projections.ErrNotFound):
		a.fail(r.Context(), w, c, reject(domain.CodeExecUnknownBusiness, map[string]any{"business_id": id}, "Unknown business"))
	case err != nil:
		a.log.Error("reading a business", "err", err)
		e := failure(domain.CodeUnavailable, "the business registry cannot be read")
		writeJSON(w, e.status, e.body())
	default:
		writeValue(w, http.StatusOK, businessViewFor(b, c.creds.Principal))
	}
}
