package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// The resource endpoints of the consumer policy engine (businesses,
// policies, transactions, webhooks), the A2A reads and the operational
// ones. Writes take and return the domain's types; reads return the
// gate's JSON as it sent it (their views are the server's), with the
// query parameters the HTTP API documents (README "HTTP API") in q (nil
// for none).

// BusinessRequest is the body of POST /businesses and PUT /businesses/{id}.
type BusinessRequest struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Categories []string `json:"categories"`
	Endpoint   string   `json:"endpoint"`
	Currency   string   `json:"currency"`
}

// WebhookRequest is the body of POST /webhooks and PUT /webhooks/{id}:
// the URL, the notice kinds (none: all), the consumer (the admin key
// names it; a principal's key is its own).
type WebhookRequest struct {
	URL      string   `json:"url"`
	Events   []string `json:"events,omitempty"`
	Consumer string   `json:"consumer,omitempty"`
}

// consumerQuery is ?consumer= when consumer is set.
func consumerQuery(consumer string) url.Values {
	if consumer == "" {
		return nil
	}
	return url.Values{"consumer": {consumer}}
}

func (c *HTTPClient) rawGet(ctx context.Context, path, route string, q url.Values) (json.RawMessage, error) {
	return rawFor(ctx, c, request{method: http.MethodGet, path: path, route: route, query: q})
}

// CreateBusiness registers a business (POST /businesses).
func (c *HTTPClient) CreateBusiness(ctx context.Context, b BusinessRequest) (*domain.Business, error) {
	return callFor[domain.Business](ctx, c, request{method: http.MethodPost, path: "/businesses", route: "POST /businesses", body: b})
}

// UpdateBusiness replaces a business (PUT /businesses/{id}).
func (c *HTTPClient) UpdateBusiness(ctx context.Context, id string, b BusinessRequest) (*domain.Business, error) {
	return callFor[domain.Business](ctx, c, request{method: http.MethodPut, path: "/businesses/" + seg(id), route: "PUT /businesses/{id}", body: b})
}

// DeleteBusiness removes a business (DELETE /businesses/{id}).
func (c *HTTPClient) DeleteBusiness(ctx context.Context, id string) (*domain.BusinessDeletedReply, error) {
	return callFor[domain.BusinessDeletedReply](ctx, c, request{method: http.MethodDelete, path: "/businesses/" + seg(id), route: "DELETE /businesses/{id}"})
}

// ListBusinesses reads a page of the registry (GET /businesses; q: limit,
// after).
func (c *HTTPClient) ListBusinesses(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/businesses", "GET /businesses", q)
}

// GetBusiness reads a business (GET /businesses/{id}).
func (c *HTTPClient) GetBusiness(ctx context.Context, id string) (json.RawMessage, error) {
	return c.rawGet(ctx, "/businesses/"+seg(id), "GET /businesses/{id}", nil)
}

// CreatePolicy creates a consumer policy (POST /policies; consumer: the
// admin key names it, "" for the key's own).
func (c *HTTPClient) CreatePolicy(ctx context.Context, consumer string, p policy.Policy) (*domain.PolicyReply, error) {
	return callFor[domain.PolicyReply](ctx, c, request{method: http.MethodPost, path: "/policies", route: "POST /policies", query: consumerQuery(consumer), body: p})
}

// UpdatePolicy replaces a policy with a new version (PUT /policies/{id}).
func (c *HTTPClient) UpdatePolicy(ctx context.Context, consumer, id string, p policy.Policy) (*domain.PolicyReply, error) {
	return callFor[domain.PolicyReply](ctx, c, request{method: http.MethodPut, path: "/policies/" + seg(id), route: "PUT /policies/{id}", query: consumerQuery(consumer), body: p})
}

// DeletePolicy removes a policy (DELETE /policies/{id}).
func (c *HTTPClient) DeletePolicy(ctx context.Context, consumer, id string) (*domain.PolicyReply, error) {
	return callFor[domain.PolicyReply](ctx, c, request{method: http.MethodDelete, path: "/policies/" + seg(id), route: "DELETE /policies/{id}", query: consumerQuery(consumer)})
}

// ListPolicies reads the consumer's current policies (GET /policies).
func (c *HTTPClient) ListPolicies(ctx context.Context, consumer string) (json.RawMessage, error) {
	return c.rawGet(ctx, "/policies", "GET /policies", consumerQuery(consumer))
}

// GetPolicy reads a policy (GET /policies/{id}), the version in force
// after the event at atSeq when atSeq > 0.
func (c *HTTPClient) GetPolicy(ctx context.Context, consumer, id string, atSeq uint64) (json.RawMessage, error) {
	q := consumerQuery(consumer)
	if atSeq > 0 {
		if q == nil {
			q = url.Values{}
		}
		q.Set("at_seq", strconv.FormatUint(atSeq, 10))
	}
	return c.rawGet(ctx, "/policies/"+seg(id), "GET /policies/{id}", q)
}

// ListTransactions reads the consumer's transactions (GET /transactions;
// q: agent, business, category, status, from, to, limit, after, consumer).
func (c *HTTPClient) ListTransactions(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/transactions", "GET /transactions", q)
}

// GetTransaction reads a transaction (GET /transactions/{id}; q: at_seq or
// at_time).
func (c *HTTPClient) GetTransaction(ctx context.Context, id string, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/transactions/"+seg(id), "GET /transactions/{id}", q)
}

// GetTransactionSummary reads the totals of a period (GET
// /transactions/summary; q: period, from, to, agent, business, category,
// status, consumer).
func (c *HTTPClient) GetTransactionSummary(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/transactions/summary", "GET /transactions/summary", q)
}

// GetTransactionAnalytics reads the transactions' analytics (GET
// /transactions/analytics).
func (c *HTTPClient) GetTransactionAnalytics(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/transactions/analytics", "GET /transactions/analytics", q)
}

// CreateWebhook subscribes a URL to the consumer's notices (POST /webhooks).
func (c *HTTPClient) CreateWebhook(ctx context.Context, w WebhookRequest) (*domain.WebhookReply, error) {
	return callFor[domain.WebhookReply](ctx, c, request{method: http.MethodPost, path: "/webhooks", route: "POST /webhooks", body: w})
}

// UpdateWebhook replaces a webhook (PUT /webhooks/{id}).
func (c *HTTPClient) UpdateWebhook(ctx context.Context, id string, w WebhookRequest) (*domain.WebhookReply, error) {
	return callFor[domain.WebhookReply](ctx, c, request{method: http.MethodPut, path: "/webhooks/" + seg(id), route: "PUT /webhooks/{id}", body: w})
}

// DeleteWebhook removes a webhook (DELETE /webhooks/{id}; consumer: the
// admin key names it).
func (c *HTTPClient) DeleteWebhook(ctx context.Context, id, consumer string) (*domain.WebhookReply, error) {
	return callFor[domain.WebhookReply](ctx, c, request{method: http.MethodDelete, path: "/webhooks/" + seg(id), route: "DELETE /webhooks/{id}", query: consumerQuery(consumer)})
}

// ListWebhooks reads the consumer's webhooks (GET /webhooks; q: consumer).
func (c *HTTPClient) ListWebhooks(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/webhooks", "GET /webhooks", q)
}

// GetWebhook reads a webhook (GET /webhooks/{id}; q: consumer).
func (c *HTTPClient) GetWebhook(ctx context.Context, id string, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/webhooks/"+seg(id), "GET /webhooks/{id}", q)
}

// ListWebhookDeliveries reads the deliveries of the consumer's notices
// (GET /webhooks/deliveries), or of one webhook's when webhookID is set
// (GET /webhooks/{id}/deliveries); q: status, kind, after, limit,
// consumer.
func (c *HTTPClient) ListWebhookDeliveries(ctx context.Context, webhookID string, q url.Values) (json.RawMessage, error) {
	if webhookID != "" {
		return c.rawGet(ctx, "/webhooks/"+seg(webhookID)+"/deliveries", "GET /webhooks/{id}/deliveries", q)
	}
	return c.rawGet(ctx, "/webhooks/deliveries", "GET /webhooks/deliveries", q)
}

// GetA2ABoundary reads a trust boundary (GET /a2a/boundary; q: principal,
// list, after, limit, at_seq, at_time, sender).
func (c *HTTPClient) GetA2ABoundary(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/a2a/boundary", "GET /a2a/boundary", q)
}

// GetA2AMetrics reads the QWED A2A metrics (GET /a2a/metrics; q as
// GetA2ABoundary's).
func (c *HTTPClient) GetA2AMetrics(ctx context.Context, q url.Values) (json.RawMessage, error) {
	return c.rawGet(ctx, "/a2a/metrics", "GET /a2a/metrics", q)
}

// A2AHealth reads the A2A configuration in force (GET /a2a/health).
func (c *HTTPClient) A2AHealth(ctx context.Context) (json.RawMessage, error) {
	return rawFor(ctx, c, request{method: http.MethodGet, path: "/a2a/health", route: "GET /a2a/health", auth: authNone})
}

// SendEvent sends a command as a structured CloudEvent (POST /events,
// application/cloudevents+json): event holds specversion, type, source,
// id, subject and data. The answer is the reply CloudEvent, whatever its
// status (a refusal's data is the error body); a request refused before
// it is read as an event is an *APIError.
func (c *HTTPClient) SendEvent(ctx context.Context, event any) (json.RawMessage, error) {
	r := request{method: http.MethodPost, path: "/events", route: "POST /events", body: event, auth: authAgent,
		header: http.Header{"Content-Type": {"application/cloudevents+json"}}}
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status >= 400 && !isResult(resp.body, "specversion") {
		return nil, resp.apiError()
	}
	return resp.body, nil
}

// OpenAPI reads the OpenAPI 3.1 document of the HTTP API (GET /openapi.json).
func (c *HTTPClient) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	return rawFor(ctx, c, request{method: http.MethodGet, path: "/openapi.json", route: "GET /openapi.json", auth: authNone})
}

// Metrics reads the Prometheus metrics, as text (GET /metrics).
func (c *HTTPClient) Metrics(ctx context.Context) (string, error) {
	b, err := rawFor(ctx, c, request{method: http.MethodGet, path: "/metrics", route: "GET /metrics", auth: authNone})
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// GetA2AAgentCard reads the Agent Card of the A2A agent the gate fronts as
// name (serve --a2a-upstream), rewritten so that its JSON-RPC interface is
// the gate (GET /a2a/proxy/{name}/.well-known/agent-card.json; legacy: the
// A2A 0.3 path, agent.json).
func (c *HTTPClient) GetA2AAgentCard(ctx context.Context, name string, legacy bool) (json.RawMessage, error) {
	file, route := "agent-card.json", "GET /a2a/proxy/{name}/.well-known/agent-card.json"
	if legacy {
		file, route = "agent.json", "GET /a2a/proxy/{name}/.well-known/agent.json"
	}
	return rawFor(ctx, c, request{method: http.MethodGet, path: "/a2a/proxy/" + seg(name) + "/.well-known/" + file, route: route, auth: authNone})
}

// A2AProxy sends an A2A JSON-RPC request (SendMessage; message/send of A2A
// 0.3) to the agent the gate fronts as name (POST /a2a/proxy/{name}): each
// part is intercepted as A2AIntercept decides it. The JSON-RPC answer is
// the result whatever its status: the agent's result or error, or the
// gate's refusal as a JSON-RPC error (the verdict in its data).
func (c *HTTPClient) A2AProxy(ctx context.Context, name string, rpcRequest any) (json.RawMessage, error) {
	r := request{method: http.MethodPost, path: "/a2a/proxy/" + seg(name), route: "POST /a2a/proxy/{name}", body: rpcRequest, auth: authAgent}
	resp, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	if resp.status >= 400 && !isResult(resp.body, "jsonrpc") {
		return nil, resp.apiError()
	}
	return resp.body, nil
}
