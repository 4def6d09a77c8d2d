package eventjson

import (
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// The consumer policies (domain/policies.go, domain/policy), in struct
// order under their json tags.

func (e *encoder) policyChange(c *domain.PolicyChange) {
	e.open()
	e.strField("op", c.Op)
	e.optStr("consumer", c.Consumer)
	e.key("policy")
	e.policy(&c.Policy)
	e.close()
}

func (e *encoder) policy(p *policy.Policy) {
	e.open()
	e.strField("id", p.ID)
	e.optStr("name", p.Name)
	e.strField("type", string(p.Type))
	e.key("scope")
	e.open()
	e.optStrings("agents", p.Scope.Agents)
	e.optStr("business_id", p.Scope.BusinessID)
	e.close()
	e.optBool("shadow", p.Shadow)
	e.optBool("override", p.Override)
	e.optInt("version", p.Version)
	if s := p.Spending; s != nil {
		e.key("spending")
		e.open()
		e.optInt("per_transaction_cents", s.PerTransactionCents)
		e.optInt("daily_cents", s.DailyCents)
		e.optInt("weekly_cents", s.WeeklyCents)
		e.optInt("monthly_cents", s.MonthlyCents)
		e.optStr("on_exceed", s.OnExceed)
		e.close()
	}
	if c := p.Category; c != nil {
		e.key("category")
		e.open()
		e.strField("mode", c.Mode)
		e.stringsField("categories", c.Categories)
		e.close()
	}
	if c := p.Confirmation; c != nil {
		e.key("confirmation")
		e.open()
		e.optBool("always", c.Always)
		e.optInt("above_cents", c.AboveCents)
		e.optBool("first_time_business", c.FirstTimeBusiness)
		e.close()
	}
	if w := p.TimeWindow; w != nil {
		e.key("time_window")
		e.open()
		e.strField("time_zone", w.TimeZone)
		e.key("windows")
		if w.Windows == nil {
			e.null()
		} else {
			e.buf = append(e.buf, '[')
			for i := range w.Windows {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				e.open()
				e.stringsField("days", w.Windows[i].Days)
				e.strField("start", w.Windows[i].Start)
				e.strField("end", w.Windows[i].End)
				e.close()
			}
			e.buf = append(e.buf, ']')
		}
		e.optStr("outside", w.Outside)
		e.close()
	}
	e.close()
}
