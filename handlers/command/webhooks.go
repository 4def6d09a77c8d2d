package command

import "github.com/agentgate/agentgate/domain"

// Webhooks (issue 14, item 10): a consumer's webhook changes, on the HTTP
// routes (POST /webhooks, PUT and DELETE /webhooks/{id}: the ID is
// Input.WebhookID) and as the qwed.webhook.change CloudEvent. They take
// an API key: a principal changes its own webhooks; the admin key those
// of the consumer the body names ("consumer"; on DELETE, Input.Consumer,
// the query's). The rules are domain.webhookChange's.

// webhookBody is the body of POST /webhooks and PUT /webhooks/{id}.
type webhookBody struct {
	URL      string   `json:"url"`
	Events   []string `json:"events,omitempty"`
	Consumer string   `json:"consumer,omitempty"`
}

// webhookChangeBody is the data of a qwed.webhook.change CloudEvent.
type webhookChangeBody = domain.WebhookChange

// webhookRoute is the endpoint of the route that makes change op: a
// create or update reads webhookBody, a delete an empty body.
func webhookRoute(op string) *Endpoint {
	body := "webhook"
	if op == domain.OpDelete {
		body = "empty"
	}
	return &Endpoint{auth: AuthPrincipal, body: body, build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
		w := domain.Webhook{ID: in.WebhookID, Consumer: in.Consumer}
		if op == domain.OpDelete {
			var b struct{}
			if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
				return nil, nil, e
			}
		} else {
			var b webhookBody
			if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
				return nil, nil, e
			}
			w.URL, w.Events = b.URL, b.Events
			if b.Consumer != "" {
				w.Consumer = b.Consumer
			}
		}
		return &domain.Command{Type: domain.CmdWebhook, Webhook: &domain.WebhookChange{Op: op, Webhook: w}}, nil, nil
	}}
}

// The HTTP routes of webhooks.
var (
	// WebhookCreate is POST /webhooks: {"url", "events", "consumer"}.
	WebhookCreate = webhookRoute(domain.OpCreate)
	// WebhookUpdate is PUT /webhooks/{id}: the same body, replacing the
	// webhook's URL and filter.
	WebhookUpdate = webhookRoute(domain.OpUpdate)
	// WebhookDelete is DELETE /webhooks/{id}.
	WebhookDelete = webhookRoute(domain.OpDelete)
)

// WebhookChange is the qwed.webhook.change CloudEvent: {"op", "webhook":
// {"id", "url", "events", "consumer"}} (domain.WebhookChange).
var WebhookChange = &Endpoint{auth: AuthPrincipal, body: "webhook-change", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b webhookChangeBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdWebhook, Webhook: &b}, nil, nil
}}
