package eventjson

import (
	"reflect"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// The decoder of the consumer policy engine's types
// (domain/execute_types.go), as fastevent.go decodes the others.

// execCommand decodes the member k of a command that belongs to the
// consumer policy engine (bits 32 and up of seen), reporting whether k is
// one.
func (d *decoder) execCommand(k []byte, c *domain.Command, seen *uint64) bool {
	switch string(k) {
	case "business":
		d.once(seen, 32)
		c.Business = new(domain.BusinessChange)
		d.businessChange(c.Business)
	case "execute":
		d.once(seen, 33)
		c.Execute = new(domain.ExecuteRequest)
		d.executeRequest(c.Execute)
	case "outcome":
		d.once(seen, 34)
		c.Outcome = new(domain.ExecuteOutcome)
		d.executeOutcome(c.Outcome)
	case "webhook":
		d.once(seen, 35)
		c.Webhook = new(domain.WebhookChange)
		d.webhookChange(c.Webhook)
	case "delivery":
		d.once(seen, 36)
		c.Delivery = new(domain.DeliveryResult)
		d.deliveryResult(c.Delivery)
	case "authenticated":
		d.once(seen, 37)
		c.Authenticated = new(domain.AuthenticatedAgent)
		d.authenticatedAgent(c.Authenticated)
	case "policy":
		d.once(seen, 38)
		c.Policy = new(domain.PolicyChange)
		d.policyChange(c.Policy)
	case "agent_blocked":
		d.once(seen, 39)
		c.AgentBlocked = new(domain.AgentNotice)
		d.agentNotice(c.AgentBlocked)
	default:
		return false
	}
	return true
}

// execEvent decodes the member k of an event that belongs to the consumer
// policy engine (bits 32 and up of seen), reporting whether k is one.
func (d *decoder) execEvent(k []byte, ev *domain.Event, seen *uint64) bool {
	switch string(k) {
	case "business":
		d.once(seen, 32)
		ev.Business = new(domain.Business)
		d.business(ev.Business)
	case "prepared":
		d.once(seen, 33)
		ev.Prepared = new(domain.ExecutePrepared)
		d.executePrepared(ev.Prepared)
	case "transaction":
		d.once(seen, 34)
		ev.Transaction = new(domain.Transaction)
		d.transaction(ev.Transaction)
	case "timers":
		d.once(seen, 35)
		ev.Timers = new(domain.ExecuteTimers)
		d.executeTimers(ev.Timers)
	case "webhook":
		d.once(seen, 36)
		ev.Webhook = new(domain.Webhook)
		d.webhook(ev.Webhook)
	case "delivery":
		d.once(seen, 37)
		ev.Delivery = new(domain.DeliveryResult)
		d.deliveryResult(ev.Delivery)
	case "policy":
		d.once(seen, 38)
		ev.Policy = new(policy.Policy)
		d.policy(ev.Policy)
	default:
		return false
	}
	return true
}

func (d *decoder) businessChange(c *domain.BusinessChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "op":
			d.once(&seen, 0)
			c.Op = d.enum()
		case "business":
			d.once(&seen, 1)
			d.business(&c.Business)
		default:
			d.unknown(k, reflect.TypeFor[domain.BusinessChange]())
		}
	}
}

func (d *decoder) business(b *domain.Business) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "id":
			d.once(&seen, 0)
			b.ID = d.str()
		case "name":
			d.once(&seen, 1)
			b.Name = d.str()
		case "categories":
			d.once(&seen, 2)
			b.Categories = d.strings()
		case "endpoint":
			d.once(&seen, 3)
			b.Endpoint = d.str()
		case "currency":
			d.once(&seen, 4)
			b.Currency = d.enum()
		case "owner":
			d.once(&seen, 5)
			b.Owner = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Business]())
		}
	}
}

func (d *decoder) executeRequest(r *domain.ExecuteRequest) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "businessId":
			d.once(&seen, 0)
			r.BusinessID = d.str()
		case "request":
			d.once(&seen, 1)
			r.Request = d.rawMessage()
		case "request_hash":
			d.once(&seen, 2)
			r.RequestHash = d.str()
		case "token_hash":
			d.once(&seen, 3)
			r.TokenHash = d.str()
		case "reply_to":
			d.once(&seen, 4)
			r.ReplyTo = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecuteRequest]())
		}
	}
}

func (d *decoder) executeOutcome(o *domain.ExecuteOutcome) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "transaction_id":
			d.once(&seen, 0)
			o.TransactionID = d.str()
		case "http_status":
			d.once(&seen, 1)
			o.HTTPStatus = d.int()
		case "status":
			d.once(&seen, 2)
			o.Status = d.enum()
		case "data":
			d.once(&seen, 3)
			o.Data = d.optRaw()
		case "confirmation_token":
			d.once(&seen, 4)
			o.ConfirmationToken = d.str()
		case "error":
			d.once(&seen, 5)
			o.Error = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecuteOutcome]())
		}
	}
}

// optRaw decodes a json.RawMessage field tagged omitempty: the encoder
// omits a nil one, so a null is refused.
func (d *decoder) optRaw() []byte {
	if d.peek() == 'n' {
		d.fail()
		return nil
	}
	return d.rawMessage()
}

func (d *decoder) webhookChange(c *domain.WebhookChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "op":
			d.once(&seen, 0)
			c.Op = d.enum()
		case "webhook":
			d.once(&seen, 1)
			d.webhook(&c.Webhook)
		default:
			d.unknown(k, reflect.TypeFor[domain.WebhookChange]())
		}
	}
}

func (d *decoder) webhook(w *domain.Webhook) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "id":
			d.once(&seen, 0)
			w.ID = d.str()
		case "url":
			d.once(&seen, 1)
			w.URL = d.str()
		case "events":
			d.once(&seen, 2)
			w.Events = d.strings()
		case "consumer":
			d.once(&seen, 3)
			w.Consumer = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Webhook]())
		}
	}
}

func (d *decoder) deliveryResult(r *domain.DeliveryResult) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "webhook_id":
			d.once(&seen, 0)
			r.WebhookID = d.str()
		case "seq":
			d.once(&seen, 1)
			r.Seq = d.uint64()
		case "notice":
			d.once(&seen, 2)
			r.Notice = d.int()
		case "attempt":
			d.once(&seen, 3)
			r.Attempt = d.int()
		case "status":
			d.once(&seen, 4)
			r.Status = d.enum()
		case "http_status":
			d.once(&seen, 5)
			r.HTTPStatus = d.int()
		case "error":
			d.once(&seen, 6)
			r.Error = d.str()
		case "next_at":
			d.once(&seen, 7)
			r.NextAt = d.timePtr()
		default:
			d.unknown(k, reflect.TypeFor[domain.DeliveryResult]())
		}
	}
}

// timePtr decodes a *time.Time field tagged omitempty: the encoder omits
// a nil one, so a null is refused.
func (d *decoder) timePtr() *time.Time {
	if d.peek() != '"' {
		d.fail()
		return nil
	}
	t := new(time.Time)
	d.time(t)
	return t
}

func (d *decoder) authenticatedAgent(a *domain.AuthenticatedAgent) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "agent_id":
			d.once(&seen, 0)
			a.AgentID = d.str()
		case "principal":
			d.once(&seen, 1)
			a.Principal = d.str()
		case "partition":
			d.once(&seen, 2)
			a.Partition = d.int32()
		default:
			d.unknown(k, reflect.TypeFor[domain.AuthenticatedAgent]())
		}
	}
}

func (d *decoder) executeConfig(c *domain.ExecuteConfig) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "mode":
			d.once(&seen, 0)
			c.Mode = d.enum()
		case "max_amount_cents":
			d.once(&seen, 1)
			c.MaxAmountCents = d.int64()
		case "token_ttl":
			d.once(&seen, 2)
			c.TokenTTL = d.duration()
		case "expired_token_kept":
			d.once(&seen, 3)
			c.ExpiredTokenKept = d.duration()
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecuteConfig]())
		}
	}
}

func (d *decoder) executePrepared(p *domain.ExecutePrepared) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "token_hash":
			d.once(&seen, 0)
			p.TokenHash = d.str()
		case "business_id":
			d.once(&seen, 1)
			p.BusinessID = d.str()
		case "request_hash":
			d.once(&seen, 2)
			p.RequestHash = d.str()
		case "summary":
			d.once(&seen, 3)
			p.Summary = d.str()
		case "consumer":
			d.once(&seen, 4)
			p.Consumer = d.str()
		case "agent_id":
			d.once(&seen, 5)
			p.AgentID = d.str()
		case "expires_at":
			d.once(&seen, 6)
			d.time(&p.ExpiresAt)
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecutePrepared]())
		}
	}
}

func (d *decoder) transaction(t *domain.Transaction) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "transaction_id":
			d.once(&seen, 0)
			t.ID = d.str()
		case "consumer":
			d.once(&seen, 1)
			t.Consumer = d.str()
		case "agent_id":
			d.once(&seen, 2)
			t.AgentID = d.str()
		case "business_id":
			d.once(&seen, 3)
			t.BusinessID = d.str()
		case "categories":
			d.once(&seen, 4)
			t.Categories = d.strings()
		case "amount_cents":
			d.once(&seen, 5)
			t.AmountCents = d.int64()
		case "currency":
			d.once(&seen, 6)
			t.Currency = d.enum()
		case "request_hash":
			d.once(&seen, 7)
			t.RequestHash = d.str()
		case "status":
			d.once(&seen, 8)
			t.Status = d.enum()
		case "created_at":
			d.once(&seen, 17)
			d.time(&t.CreatedAt)
		case "decided_seq":
			d.once(&seen, 19)
			t.DecidedSeq = d.uint64()
		case "business_owner":
			d.once(&seen, 20)
			t.BusinessOwner = d.str()
		case "policy_id":
			d.once(&seen, 9)
			t.PolicyID = d.str()
		case "limit":
			d.once(&seen, 10)
			t.Limit = d.str()
		case "findings":
			d.once(&seen, 18)
			t.Findings = decodeList(d, d.policyFinding)
		case "notices":
			d.once(&seen, 11)
			t.Notices = decodeList(d, d.notice)
		case "approval_id":
			d.once(&seen, 12)
			t.ApprovalID = d.str()
		case "release_at":
			d.once(&seen, 13)
			t.ReleaseAt = d.timePtr()
		case "business_status":
			d.once(&seen, 14)
			t.BusinessStatus = d.enum()
		case "data":
			d.once(&seen, 15)
			t.Data = d.optRaw()
		case "confirmation_token":
			d.once(&seen, 16)
			t.ConfirmationToken = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Transaction]())
		}
	}
}

func (d *decoder) notice(n *domain.Notice) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "kind":
			d.once(&seen, 0)
			n.Kind = d.enum()
		case "policy_id":
			d.once(&seen, 1)
			n.PolicyID = d.str()
		case "message":
			d.once(&seen, 2)
			n.Message = d.str()
		default:
			d.unknown(k, reflect.TypeFor[domain.Notice]())
		}
	}
}

func (d *decoder) executeTimers(t *domain.ExecuteTimers) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "tokens_expired":
			d.once(&seen, 0)
			t.TokensExpired = d.strings()
		case "released":
			d.once(&seen, 1)
			t.Released = d.strings()
		case "expired":
			d.once(&seen, 2)
			t.Expired = d.strings()
		default:
			d.unknown(k, reflect.TypeFor[domain.ExecuteTimers]())
		}
	}
}

func (d *decoder) policyFinding(f *policy.Finding) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "policy_id":
			d.once(&seen, 0)
			f.PolicyID = d.str()
		case "version":
			d.once(&seen, 1)
			f.Version = d.int64()
		case "type":
			d.once(&seen, 2)
			f.Type = policy.Type(d.enum())
		case "verdict":
			d.once(&seen, 3)
			f.Verdict = policy.Verdict(d.enum())
		case "shadow":
			d.once(&seen, 4)
			f.Shadow = d.bool()
		case "code":
			d.once(&seen, 5)
			f.Code = d.enum()
		case "limit":
			d.once(&seen, 6)
			f.Limit = d.str()
		case "message":
			d.once(&seen, 7)
			f.Message = d.str()
		default:
			d.unknown(k, reflect.TypeFor[policy.Finding]())
		}
	}
}

// decodeList decodes an array of structs as encoding/json does: null is a
// nil slice, [] an empty one, each element decoded by elem.
func decodeList[T any](d *decoder, elem func(*T)) []T {
	if d.null() {
		return nil
	}
	out := []T{}
	d.array(func() {
		out = append(out, *new(T))
		elem(&out[len(out)-1])
	})
	return out
}
