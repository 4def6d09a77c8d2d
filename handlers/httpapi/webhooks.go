package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/projections"
)

// Webhooks (issue 14, item 10): a consumer's webhooks and their
// deliveries. The writes are commands (command.WebhookCreate, ...): a
// principal's API key changes its own webhooks, the admin key those of
// the consumer it names ("consumer" in the body; ?consumer= on DELETE).
// The reads are the projections': a principal reads its own, the admin
// everyone's (or one consumer's with ?consumer=); another consumer's
// webhook is not found, whether it exists or not. Config.WebhookRateLimit
// bounds the writes per API key before they are decided.

// webhookRoutes registers the webhook endpoints.
func (a *api) webhookRoutes() {
	limited := writeOptions{admit: a.webhookAdmit}
	a.handle("POST /webhooks", a.writeWith(command.WebhookCreate, webhookQuery, limited))
	a.handle("GET /webhooks", a.listWebhooks)
	a.handle("GET /webhooks/deliveries", a.listDeliveries)
	a.handle("GET /webhooks/{id}", a.getWebhook)
	a.handle("PUT /webhooks/{id}", a.writeWith(command.WebhookUpdate, webhookPath, limited))
	a.handle("DELETE /webhooks/{id}", a.writeWith(command.WebhookDelete, webhookPath, limited))
	a.handle("GET /webhooks/{id}/deliveries", a.listDeliveries)
}

// webhookQuery is the input of a webhook write besides its body: the
// consumer the admin key names with ?consumer=.
func webhookQuery(r *http.Request) (command.Input, *apiError) {
	c := r.URL.Query().Get("consumer")
	if len(c) > MaxPathIDBytes {
		return command.Input{}, reject(domain.CodeInvalidRequest, map[string]any{"field": "consumer", "max_bytes": MaxPathIDBytes},
			"consumer is longer than %d bytes", MaxPathIDBytes)
	}
	return command.Input{Consumer: c}, nil
}

// webhookPath is webhookQuery with the webhook of the path.
func webhookPath(r *http.Request) (command.Input, *apiError) {
	in, e := webhookQuery(r)
	if e != nil {
		return in, e
	}
	in.WebhookID, e = pathValue(r, "id")
	return in, e
}

// webhookAdmit applies Config.WebhookRateLimit to the API key's
// principal: over it, 429 with Retry-After, nothing recorded.
func (a *api) webhookAdmit(w http.ResponseWriter, c *call) *apiError {
	if a.webhookLimiter == nil {
		return nil
	}
	e, wait := a.webhookLimiter.allow(domain.RequestScope(c.creds.Principal, ""), a.cfg.Clock())
	if e != nil {
		writeRetryAfter(w, wait)
	}
	return e
}

// webhookReader is the consumer a webhook read is for: the key's
// principal, or with the admin key the ?consumer= given (every
// consumer's without one). An agent token reads no webhook.
func (a *api) webhookReader(r *http.Request, c *call) (string, *apiError) {
	var e *apiError
	if c.creds, e = a.credentials(r, true, false); e != nil {
		return "", e
	}
	in, e := webhookQuery(r)
	if e != nil {
		return "", e
	}
	if c.creds.Principal != domain.AdminPrincipal {
		if in.Consumer != "" && in.Consumer != c.creds.Principal {
			return "", reject(domain.CodeForbidden, nil, "the API key's principal has no access to this resource")
		}
		return c.creds.Principal, nil
	}
	if in.Consumer != "" {
		return in.Consumer, nil
	}
	return domain.AdminPrincipal, nil
}

// webhooksView is the answer of GET /webhooks.
type webhooksView struct {
	Webhooks []domain.Webhook `json:"webhooks"`
}

func (a *api) listWebhooks(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	consumer, e := a.webhookReader(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	list, err := a.cfg.Store.Webhooks(consumer)
	if err != nil {
		a.readFailed(w, "webhooks", err)
		return
	}
	if list == nil {
		list = []domain.Webhook{}
	}
	writeValue(w, http.StatusOK, webhooksView{Webhooks: list})
}

func (a *api) getWebhook(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	consumer, e := a.webhookReader(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	id, e := pathValue(r, "id")
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	h, err := a.cfg.Store.Webhook(consumer, id)
	if a.caughtUp(r.Context(), err) {
		h, err = a.cfg.Store.Webhook(consumer, id)
	}
	if errors.Is(err, projections.ErrNotFound) {
		a.fail(r.Context(), w, c, reject(domain.CodeNotFound, map[string]any{"webhook_id": id}, "webhook %q not found", id))
		return
	}
	if err != nil {
		a.readFailed(w, "webhook", err)
		return
	}
	writeValue(w, http.StatusOK, h)
}

// deliveriesView is the answer of GET /webhooks/deliveries and GET
// /webhooks/{id}/deliveries.
type deliveriesView struct {
	Deliveries []projections.Delivery `json:"deliveries"`
	// NextAfter is the after of the next page, null on the last.
	NextAfter *string `json:"next_after"`
}

// deliveryStatuses are the values of the status filter.
var deliveryStatuses = []string{domain.DeliveryPending, domain.DeliveryDelivered, domain.DeliveryRetrying, domain.DeliveryFailed}

// deliveryFilter reads the filters of a deliveries list: webhook_id (or
// the path's webhook), status, kind.
func deliveryFilter(r *http.Request, q url.Values) (projections.DeliveryFilter, *apiError) {
	f := projections.DeliveryFilter{WebhookID: q.Get("webhook_id"), Status: q.Get("status"), Kind: q.Get("kind")}
	if id := r.PathValue("id"); id != "" {
		f.WebhookID = id
	}
	if len(f.WebhookID) > MaxPathIDBytes {
		return f, reject(domain.CodeInvalidRequest, map[string]any{"field": "webhook_id", "max_bytes": MaxPathIDBytes},
			"webhook_id is longer than %d bytes", MaxPathIDBytes)
	}
	if f.Status != "" && !slices.Contains(deliveryStatuses, f.Status) {
		return f, reject(domain.CodeInvalidRequest, map[string]any{"field": "status"},
			"status must be pending, delivered, retrying or failed")
	}
	if f.Kind != "" && !slices.Contains(domain.NoticeKinds, f.Kind) {
		return f, reject(domain.CodeInvalidRequest, map[string]any{"field": "kind"},
			"kind must be one of %s", strings.Join(domain.NoticeKinds, ", "))
	}
	return f, nil
}

func (a *api) listDeliveries(w http.ResponseWriter, r *http.Request) {
	c := newCall(r)
	consumer, e := a.webhookReader(r, c)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	q := r.URL.Query()
	f, e := deliveryFilter(r, q)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	limit, after, e := parsePage(q)
	if e != nil {
		a.fail(r.Context(), w, c, e)
		return
	}
	list, next, err := a.cfg.Store.Deliveries(consumer, f, after, limit, projections.MaxPageBytes)
	if errors.Is(err, projections.ErrNotFound) {
		a.fail(r.Context(), w, c, reject(domain.CodeInvalidRequest, map[string]any{"field": "after"},
			"after names no delivery of this consumer"))
		return
	}
	if err != nil {
		a.readFailed(w, "deliveries", err)
		return
	}
	if list == nil {
		list = []projections.Delivery{}
	}
	v := deliveriesView{Deliveries: list}
	if next != "" {
		v.NextAfter = &next
	}
	writeValue(w, http.StatusOK, v)
}

// readFailed logs a read of the store that failed and answers 503
// QWED-SYS-002 naming what could not be read.
func (a *api) readFailed(w http.ResponseWriter, what string, err error) {
	a.log.Error("reading "+what, "err", err)
	e := failure(domain.CodeUnavailable, "the %s cannot be read", what)
	writeJSON(w, e.status, e.body())
}
