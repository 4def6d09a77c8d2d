package eventjson

import "github.com/agentgate/agentgate/domain"

// The types of the consumer policy engine (domain/execute_types.go), in
// struct order under their json tags, as encode_event.go writes the
// others.

func (e *encoder) businessChange(c *domain.BusinessChange) {
	e.open()
	e.strField("op", c.Op)
	e.key("business")
	e.business(&c.Business)
	e.close()
}

func (e *encoder) business(b *domain.Business) {
	e.open()
	e.strField("id", b.ID)
	e.strField("name", b.Name)
	e.stringsField("categories", b.Categories)
	e.strField("endpoint", b.Endpoint)
	e.strField("currency", b.Currency)
	e.strField("owner", b.Owner)
	e.close()
}

func (e *encoder) executeRequest(r *domain.ExecuteRequest) {
	e.open()
	e.strField("businessId", r.BusinessID)
	e.key("request")
	e.raw(r.Request)
	e.strField("request_hash", r.RequestHash)
	e.optStr("token_hash", r.TokenHash)
	e.optStr("reply_to", r.ReplyTo)
	e.close()
}

func (e *encoder) executeOutcome(o *domain.ExecuteOutcome) {
	e.open()
	e.strField("transaction_id", o.TransactionID)
	e.optInt("http_status", int64(o.HTTPStatus))
	e.strField("status", o.Status)
	e.optRaw("data", o.Data)
	e.optStr("confirmation_token", o.ConfirmationToken)
	e.optStr("error", o.Error)
	e.close()
}

// optRaw writes a json.RawMessage field tagged omitempty (nil and empty
// are omitted).
func (e *encoder) optRaw(name string, m []byte) {
	if len(m) > 0 {
		e.key(name)
		e.raw(m)
	}
}

func (e *encoder) webhookChange(c *domain.WebhookChange) {
	e.open()
	e.strField("op", c.Op)
	e.key("webhook")
	e.webhook(&c.Webhook)
	e.close()
}

func (e *encoder) webhook(w *domain.Webhook) {
	e.open()
	e.strField("id", w.ID)
	e.strField("url", w.URL)
	e.optStrings("events", w.Events)
	e.strField("consumer", w.Consumer)
	e.close()
}

func (e *encoder) deliveryResult(r *domain.DeliveryResult) {
	e.open()
	e.strField("webhook_id", r.WebhookID)
	e.uintField("seq", r.Seq)
	e.intField("notice", int64(r.Notice))
	e.intField("attempt", int64(r.Attempt))
	e.strField("status", r.Status)
	e.optInt("http_status", int64(r.HTTPStatus))
	e.optStr("error", r.Error)
	if r.NextAt != nil {
		e.key("next_at")
		e.timePtr(r.NextAt)
	}
	e.close()
}

func (e *encoder) authenticatedAgent(a *domain.AuthenticatedAgent) {
	e.open()
	e.strField("agent_id", a.AgentID)
	e.strField("principal", a.Principal)
	e.intField("partition", int64(a.Partition))
	e.close()
}

func (e *encoder) executeConfig(c *domain.ExecuteConfig) {
	e.open()
	e.strField("mode", c.Mode)
	e.intField("max_amount_cents", c.MaxAmountCents)
	e.durationField("token_ttl", c.TokenTTL)
	if c.ExpiredTokenKept != 0 {
		e.durationField("expired_token_kept", c.ExpiredTokenKept)
	}
	e.close()
}

func (e *encoder) executePrepared(p *domain.ExecutePrepared) {
	e.open()
	e.strField("token_hash", p.TokenHash)
	e.strField("business_id", p.BusinessID)
	e.strField("request_hash", p.RequestHash)
	e.strField("summary", p.Summary)
	e.strField("consumer", p.Consumer)
	e.strField("agent_id", p.AgentID)
	e.timeField("expires_at", p.ExpiresAt)
	e.close()
}

func (e *encoder) transaction(t *domain.Transaction) {
	e.open()
	e.strField("transaction_id", t.ID)
	e.strField("consumer", t.Consumer)
	e.strField("agent_id", t.AgentID)
	e.strField("business_id", t.BusinessID)
	e.optStrings("categories", t.Categories)
	e.intField("amount_cents", t.AmountCents)
	e.strField("currency", t.Currency)
	e.strField("request_hash", t.RequestHash)
	e.strField("status", t.Status)
	e.timeField("created_at", t.CreatedAt)
	if t.DecidedSeq != 0 {
		e.uintField("decided_seq", t.DecidedSeq)
	}
	e.optStr("business_owner", t.BusinessOwner)
	e.optStr("policy_id", t.PolicyID)
	e.optStr("limit", t.Limit)
	if len(t.Findings) > 0 {
		e.key("findings")
		e.buf = append(e.buf, '[')
		for i := range t.Findings {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			f := &t.Findings[i]
			e.open()
			e.strField("policy_id", f.PolicyID)
			e.optInt("version", f.Version)
			e.strField("type", string(f.Type))
			e.strField("verdict", string(f.Verdict))
			e.optBool("shadow", f.Shadow)
			e.optStr("code", f.Code)
			e.optStr("limit", f.Limit)
			e.strField("message", f.Message)
			e.close()
		}
		e.buf = append(e.buf, ']')
	}
	if len(t.Notices) > 0 {
		e.key("notices")
		e.buf = append(e.buf, '[')
		for i := range t.Notices {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			n := &t.Notices[i]
			e.open()
			e.strField("kind", n.Kind)
			e.optStr("policy_id", n.PolicyID)
			e.strField("message", n.Message)
			e.close()
		}
		e.buf = append(e.buf, ']')
	}
	e.optStr("approval_id", t.ApprovalID)
	if t.ReleaseAt != nil {
		e.key("release_at")
		e.timePtr(t.ReleaseAt)
	}
	e.optStr("business_status", t.BusinessStatus)
	e.optRaw("data", t.Data)
	e.optStr("confirmation_token", t.ConfirmationToken)
	e.close()
}

func (e *encoder) executeTimers(t *domain.ExecuteTimers) {
	e.open()
	e.optStrings("tokens_expired", t.TokensExpired)
	e.optStrings("released", t.Released)
	e.optStrings("expired", t.Expired)
	e.close()
}

// execCommand writes the members of the consumer policy engine of a
// command (after copy, in struct order).
func (e *encoder) execCommand(c *domain.Command) {
	if c.Business != nil {
		e.key("business")
		e.businessChange(c.Business)
	}
	if c.Execute != nil {
		e.key("execute")
		e.executeRequest(c.Execute)
	}
	if c.Outcome != nil {
		e.key("outcome")
		e.executeOutcome(c.Outcome)
	}
	if c.Policy != nil {
		e.key("policy")
		e.policyChange(c.Policy)
	}
	if c.Webhook != nil {
		e.key("webhook")
		e.webhookChange(c.Webhook)
	}
	if c.Delivery != nil {
		e.key("delivery")
		e.deliveryResult(c.Delivery)
	}
	if c.Authenticated != nil {
		e.key("authenticated")
		e.authenticatedAgent(c.Authenticated)
	}
	if c.AgentBlocked != nil {
		e.key("agent_blocked")
		e.agentNotice(c.AgentBlocked)
	}
}

// execEvent writes the members of the consumer policy engine of an event
// (after a2a_boundary, in struct order).
func (e *encoder) execEvent(ev *domain.Event) {
	if ev.Business != nil {
		e.key("business")
		e.business(ev.Business)
	}
	if ev.Prepared != nil {
		e.key("prepared")
		e.executePrepared(ev.Prepared)
	}
	if ev.Transaction != nil {
		e.key("transaction")
		e.transaction(ev.Transaction)
	}
	if ev.Timers != nil {
		e.key("timers")
		e.executeTimers(ev.Timers)
	}
	if ev.Policy != nil {
		e.key("policy")
		e.policy(ev.Policy)
	}
	if ev.Webhook != nil {
		e.key("webhook")
		e.webhook(ev.Webhook)
	}
	if ev.Delivery != nil {
		e.key("delivery")
		e.deliveryResult(ev.Delivery)
	}
}
