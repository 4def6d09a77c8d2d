package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain/policy"
)

// Webhooks (issue 14, item 10): a consumer registers URLs the gate POSTs
// its notices to (blocked, confirm_needed, queued, limit_80), signed with
// the gate's attestation keys. A webhook change is a command of the
// consumer (qwed.webhook.change, decided on the consumer's home
// partition); each delivery attempt is a command of the gate's notify
// runner (qwed.webhook.delivery), whose event records the attempt and, by
// the rules here, whether and when it is retried. Which notices go to
// which webhooks is the projection's (projections.Fold notes the
// consumer's webhooks of each event with notices); this file holds the
// rules.

// Named limits of webhooks (invariant 7, docs/ARCHITECTURE.md).
const (
	// MaxWebhooksPerConsumer bounds a consumer's webhooks.
	MaxWebhooksPerConsumer = 10
	// MaxWebhookURLBytes bounds a webhook's URL.
	MaxWebhookURLBytes = 2048
	// MaxDeliveryAttempts bounds the attempts of one delivery: past the
	// last failed one it is failed for good.
	MaxDeliveryAttempts = 8
	// DeliveryBackoffBase is the wait after the first failed attempt;
	// each further one waits twice as long, up to DeliveryBackoffMax.
	DeliveryBackoffBase = 5 * time.Second
	// DeliveryBackoffMax caps the wait between two attempts.
	DeliveryBackoffMax = time.Hour
	// MaxDeliveryErrorBytes bounds an attempt's error text.
	MaxDeliveryErrorBytes = 512
	// MaxNoticeIndex bounds the index of a notice within its event.
	MaxNoticeIndex = 255
)

// The statuses of a delivery: pending (not attempted yet: the
// projection's only), then after each attempt delivered, retrying or
// failed.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryRetrying  = "retrying"
	DeliveryFailed    = "failed"
)

// NoticeKinds are the kinds of notice a webhook may filter on, in their
// documented order: the four of the execute rules, a spending policy's
// limit_exceeded (on_exceed notify: the execute proceeds, the consumer is
// told), and an agent's blocked decision (NoticeAgentBlocked, only with
// Config.AgentNotices, and only to webhooks that name it).
var NoticeKinds = []string{NoticeBlocked, NoticeConfirmNeeded, NoticeQueued, NoticeLimit80, policy.NoticeLimitExceeded, NoticeAgentBlocked}

// idKindWebhook keeps the webhook IDs' digest space apart from the
// other derived IDs' (ids.go).
const idKindWebhook = 0x20

// webhookIDHexLen is the length, in hex digits, of a webhook ID's digest.
const webhookIDHexLen = 24

// WebhookIDFor returns the webhook ID a create request mints: "wh_" and
// 24 hex digits of the request's digest.
func WebhookIDFor(r RequestID) string {
	return derivedID("wh_", idKindWebhook, webhookIDHexLen, r)
}

// DeliveryID returns the ID of the delivery of the notice-th notice of the
// event at seq of partition to webhook: "dl_" and 24 hex digits of the
// SHA-256 of the four, so the runner, the projections and a replay derive
// the same ID from the log.
func DeliveryID(partition int32, seq uint64, notice int, webhook string) string {
	var b [64]byte
	p := append(b[:0], "delivery"...)
	p = appendBE(p, uint64(uint32(partition)), 4)
	p = appendBE(p, seq, 8)
	p = appendBE(p, uint64(uint32(notice)), 4)
	p = append(p, webhook...)
	d := sha256.Sum256(p)
	return "dl_" + hex.EncodeToString(d[:webhookIDHexLen/2])
}

// appendBE appends the n low bytes of v, big-endian.
func appendBE(b []byte, v uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// DeliveryBackoff is the wait after the attempt-th failed attempt:
// DeliveryBackoffBase doubled attempt-1 times, at most DeliveryBackoffMax.
func DeliveryBackoff(attempt int) time.Duration {
	d := DeliveryBackoffBase
	for i := 1; i < attempt && d < DeliveryBackoffMax; i++ {
		d *= 2
	}
	return min(d, DeliveryBackoffMax)
}

// WebhookWants reports whether w is sent notices of kind: the kinds its
// events name, or, without a filter, every kind of the execute rules.
// NoticeAgentBlocked goes only to webhooks that name it: a webhook made
// before the kind existed receives what it received.
func WebhookWants(w *Webhook, kind string) bool {
	if len(w.Events) == 0 {
		return kind != NoticeAgentBlocked
	}
	return slices.Contains(w.Events, kind)
}

// ConsumerWebhooks returns consumer's webhooks in s sorted by ID (nil
// when it has none).
func ConsumerWebhooks(s *State, consumer string) []*Webhook {
	if s.Exec == nil || s.Exec.Consumers[consumer] == nil {
		return nil
	}
	m := s.Exec.Consumers[consumer].Webhooks
	out := make([]*Webhook, 0, len(m))
	for _, w := range m {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *Webhook) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// webhookChange decides a qwed.webhook.change: a principal changes its
// own webhooks; the admin those of the consumer the body names. The
// event carries the webhook as it is after the change (its ID and
// consumer only, on a delete).
func (d *decider) webhookChange() *Event {
	r := d.cmd.Webhook
	if r == nil {
		return d.reject(missing("webhook"))
	}
	consumer, err := d.webhookConsumer(r.Webhook.Consumer)
	if err != nil {
		return d.reject(err)
	}
	var cur map[string]*Webhook
	if d.s.Exec != nil && d.s.Exec.Consumers[consumer] != nil {
		cur = d.s.Exec.Consumers[consumer].Webhooks
	}
	w := Webhook{ID: r.Webhook.ID, URL: r.Webhook.URL, Events: r.Webhook.Events, Consumer: consumer}
	switch r.Op {
	case OpCreate:
		if w.ID != "" {
			return d.reject(fieldError(CodeInvalidRequest, "webhook.id", "is minted by the gate on create"))
		}
		if err := d.requestIDPresent(); err != nil {
			return d.reject(err)
		}
		w.ID = WebhookIDFor(d.cmd.Request)
		if cur[w.ID] != nil {
			return d.reject(Errorf(CodeConflict, "webhook '%s' exists", w.ID))
		}
		if len(cur) >= MaxWebhooksPerConsumer {
			return d.reject(fieldError(CodeInvalidRequest, "webhook", "the consumer already has %d webhooks", MaxWebhooksPerConsumer))
		}
	case OpUpdate, OpDelete:
		if w.ID == "" {
			return d.reject(missing("webhook.id"))
		}
		if cur[w.ID] == nil {
			// Another consumer's webhook is as unknown as one never made.
			return d.reject(Errorf(CodeNotFound, "webhook '%s' not found", clipID(w.ID)))
		}
		if r.Op == OpDelete {
			if w.URL != "" || len(w.Events) != 0 {
				return d.reject(fieldError(CodeInvalidRequest, "webhook", "a delete names the webhook's id only"))
			}
			d.ev.Type = EvWebhookChanged
			d.ev.Webhook = &w
			return d.ev
		}
	case "":
		return d.reject(missing("op"))
	default:
		return d.reject(fieldError(CodeInvalidRequest, "op", "'%s' is not one of create, update, delete", clipID(r.Op)))
	}
	if err := checkWebhookURL(w.URL); err != nil {
		return d.reject(err)
	}
	if err := checkWebhookEvents(w.Events, d.s.Config.AgentNotices); err != nil {
		return d.reject(err)
	}
	w.Events = slices.Clone(w.Events)
	d.ev.Type = EvWebhookChanged
	d.ev.Webhook = &w
	return d.ev
}

// webhookConsumer is the consumer a webhook change is for: the key's
// principal (a body naming another is refused), or, with the admin key,
// the consumer the body names. An agent token changes no webhook.
func (d *decider) webhookConsumer(named string) (string, *Error) {
	p := d.cmd.Principal
	switch {
	case p == AdminPrincipal:
		if named == "" {
			return "", missing("webhook.consumer")
		}
		if named == AdminPrincipal || len(named) > MaxWebhookURLBytes {
			return "", fieldError(CodeInvalidRequest, "webhook.consumer", "is not a principal")
		}
		return named, nil
	case p != "":
		if named != "" && named != p {
			return "", Errorf(CodeForbidden, "principal '%s' may not act for principal '%s'", p, clipID(named))
		}
		return p, nil
	case d.cmd.TokenHash != "":
		return "", Errorf(CodeForbidden, "an agent token cannot change a webhook: use a principal API key")
	}
	return "", Errorf(CodeMissingAPIKey, "principal API key required")
}

// clipID bounds an identifier echoed in a message.
func clipID(s string) string {
	const n = 128
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkWebhookURL checks a webhook URL: at most MaxWebhookURLBytes of
// printable ASCII, the scheme http or https (lower case), a host (a name,
// an IPv4 address or a bracketed IPv6 address) and an optional port of
// 1-65535, then an optional path and query; no user information and no
// fragment. It is a syntax check: which addresses the runner may reach is
// the runner's (handlers/notify).
func checkWebhookURL(u string) *Error {
	const field = "webhook.url"
	if u == "" {
		return missing(field)
	}
	if len(u) > MaxWebhookURLBytes {
		return fieldError(CodeInvalidRequest, field, "is longer than %d bytes", MaxWebhookURLBytes)
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return fieldError(CodeInvalidRequest, field, "holds a space, a control character, a backslash or a non-ASCII byte at offset %d", i)
		}
	}
	var rest string
	switch {
	case strings.HasPrefix(u, "https://"):
		rest = u[len("https://"):]
	case strings.HasPrefix(u, "http://"):
		rest = u[len("http://"):]
	default:
		return fieldError(CodeInvalidRequest, field, "must be an absolute http:// or https:// URL")
	}
	if strings.IndexByte(rest, '#') >= 0 {
		return fieldError(CodeInvalidRequest, field, "must not have a fragment")
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority = rest[:i]
	}
	if strings.IndexByte(authority, '@') >= 0 {
		return fieldError(CodeInvalidRequest, field, "must not carry user information")
	}
	host, port := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return fieldError(CodeInvalidRequest, field, "has an unterminated IPv6 address")
		}
		host, port = authority[1:end], authority[end+1:]
		if host == "" || strings.Trim(host, "0123456789abcdefABCDEF:.") != "" {
			return fieldError(CodeInvalidRequest, field, "has a malformed IPv6 address")
		}
		if port != "" && port[0] != ':' {
			return fieldError(CodeInvalidRequest, field, "has a malformed port")
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if host == "" {
		return fieldError(CodeInvalidRequest, field, "has no host")
	}
	if !strings.HasPrefix(authority, "[") {
		for _, label := range strings.Split(host, ".") {
			if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
				return fieldError(CodeInvalidRequest, field, "has a malformed host")
			}
		}
	}
	if port != "" {
		n, digits := 0, port[1:]
		if len(digits) == 0 || len(digits) > 5 || strings.Trim(digits, "0123456789") != "" {
			return fieldError(CodeInvalidRequest, field, "has a malformed port")
		}
		for _, c := range digits {
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > 65535 {
			return fieldError(CodeInvalidRequest, field, "has a port outside 1-65535")
		}
	}
	return nil
}

// checkWebhookEvents checks a webhook's filter: known notice kinds, each
// at most once; NoticeAgentBlocked only when agentNotices (a log written
// before it refused the kind, and re-decides the refusal).
func checkWebhookEvents(events []string, agentNotices bool) *Error {
	kinds := NoticeKinds
	if !agentNotices {
		kinds = kinds[:len(kinds)-1]
	}
	for i, k := range events {
		if !slices.Contains(kinds, k) {
			return fieldError(CodeInvalidRequest, "webhook.events", "'%s' is not one of %s", clipID(k), strings.Join(kinds, ", "))
		}
		if slices.Contains(events[:i], k) {
			return fieldError(CodeInvalidRequest, "webhook.events", "'%s' is listed twice", k)
		}
	}
	return nil
}

// webhookDelivery decides a qwed.webhook.delivery: the result of one
// delivery attempt, reported by the gate's notify runner (no transport
// builds it) as the consumer's (Command.Principal). The event records it
// with its status: delivered (a 2xx answer), failed (the webhook is gone,
// or this was attempt MaxDeliveryAttempts), or retrying at NextAt = the
// decision's time + DeliveryBackoff(attempt).
func (d *decider) webhookDelivery() *Event {
	r := d.cmd.Delivery
	if r == nil {
		return d.reject(missing("delivery"))
	}
	consumer := d.cmd.Principal
	switch {
	case consumer == "" || consumer == AdminPrincipal:
		return d.reject(fieldError(CodeInvalidRequest, "principal", "a delivery is recorded for its consumer"))
	case r.WebhookID == "":
		return d.reject(missing("delivery.webhook_id"))
	case len(r.WebhookID) > MaxWebhookURLBytes:
		return d.reject(fieldError(CodeInvalidRequest, "delivery.webhook_id", "is too long"))
	case r.Seq == 0:
		return d.reject(missing("delivery.seq"))
	case r.Notice < 0 || r.Notice > MaxNoticeIndex:
		return d.reject(fieldError(CodeInvalidRequest, "delivery.notice", "must be 0-%d", MaxNoticeIndex))
	case r.Attempt < 1 || r.Attempt > MaxDeliveryAttempts:
		return d.reject(fieldError(CodeInvalidRequest, "delivery.attempt", "must be 1-%d", MaxDeliveryAttempts))
	case r.HTTPStatus != 0 && (r.HTTPStatus < 100 || r.HTTPStatus > 599):
		return d.reject(fieldError(CodeInvalidRequest, "delivery.http_status", "must be 100-599"))
	case len(r.Error) > MaxDeliveryErrorBytes:
		return d.reject(fieldError(CodeInvalidRequest, "delivery.error", "is longer than %d bytes", MaxDeliveryErrorBytes))
	case r.Status != "" || r.NextAt != nil:
		return d.reject(fieldError(CodeInvalidRequest, "delivery.status", "is the gate's to decide"))
	}
	res := *r
	var hook *Webhook
	if d.s.Exec != nil && d.s.Exec.Consumers[consumer] != nil {
		hook = d.s.Exec.Consumers[consumer].Webhooks[r.WebhookID]
	}
	switch {
	case hook == nil:
		res.Status = DeliveryFailed
		if res.Error == "" {
			res.Error = "webhook deleted"
		}
	case res.Error == "" && res.HTTPStatus >= 200 && res.HTTPStatus < 300:
		res.Status = DeliveryDelivered
	case res.Attempt >= MaxDeliveryAttempts:
		res.Status = DeliveryFailed
	default:
		res.Status = DeliveryRetrying
		next := d.now.Add(DeliveryBackoff(res.Attempt))
		res.NextAt = &next
	}
	d.ev.Type = EvDeliveryRecorded
	d.ev.Delivery = &res
	return d.ev
}

// applyWebhook folds a webhook.changed event: the webhook replaces the
// consumer's one of its ID, or (a delete: no URL) removes it.
func applyWebhook(s *State, w *Webhook) {
	if w == nil || w.Consumer == "" {
		return
	}
	if s.Exec == nil {
		s.Exec = &ExecState{}
	}
	if s.Exec.Consumers == nil {
		s.Exec.Consumers = map[string]*ConsumerExec{}
	}
	c := s.Exec.Consumers[w.Consumer]
	if c == nil {
		c = &ConsumerExec{}
		s.Exec.Consumers[w.Consumer] = c
	}
	if w.URL == "" {
		delete(c.Webhooks, w.ID)
		if len(c.Webhooks) == 0 {
			c.Webhooks = nil
		}
		return
	}
	if c.Webhooks == nil {
		c.Webhooks = map[string]*Webhook{}
	}
	cp := *w
	cp.Events = slices.Clone(w.Events)
	c.Webhooks[w.ID] = &cp
}

// WebhookReply is the reply to a webhook change: the webhook as it is
// after it (Deleted, and the ID and consumer only, after a delete).
type WebhookReply struct {
	ID       string   `json:"id"`
	URL      string   `json:"url,omitempty"`
	Events   []string `json:"events,omitempty"`
	Consumer string   `json:"consumer"`
	Deleted  bool     `json:"deleted,omitempty"`
}

// webhookReply renders webhook.changed (201 on a create, else 200) and
// webhook.delivery_recorded (200, the recorded attempt); a nil body when
// the event lacks its payload.
func webhookReply(ev *Event) (int, any) {
	switch {
	case ev.Type == EvWebhookChanged && ev.Webhook != nil:
		w := ev.Webhook
		r := WebhookReply{ID: w.ID, URL: w.URL, Events: w.Events, Consumer: w.Consumer, Deleted: w.URL == ""}
		if ev.Command != nil && ev.Command.Webhook != nil && ev.Command.Webhook.Op == OpCreate {
			return 201, r
		}
		return 200, r
	case ev.Type == EvDeliveryRecorded && ev.Delivery != nil:
		return 200, ev.Delivery
	}
	return 0, nil
}
