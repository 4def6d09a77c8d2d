package eventjson

import (
	"reflect"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
)

// The decoder of the consumer policies (domain/policies.go,
// domain/policy), as fastexec.go decodes the other types of the consumer
// policy engine.

func (d *decoder) policyChange(c *domain.PolicyChange) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "op":
			d.once(&seen, 0)
			c.Op = d.enum()
		case "consumer":
			d.once(&seen, 1)
			c.Consumer = d.str()
		case "policy":
			d.once(&seen, 2)
			d.policy(&c.Policy)
		default:
			d.unknown(k, reflect.TypeFor[domain.PolicyChange]())
		}
	}
}

func (d *decoder) policy(p *policy.Policy) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "id":
			d.once(&seen, 0)
			p.ID = d.str()
		case "name":
			d.once(&seen, 1)
			p.Name = d.str()
		case "type":
			d.once(&seen, 2)
			p.Type = policy.Type(d.enum())
		case "scope":
			d.once(&seen, 3)
			d.policyScope(&p.Scope)
		case "shadow":
			d.once(&seen, 4)
			p.Shadow = d.bool()
		case "override":
			d.once(&seen, 5)
			p.Override = d.bool()
		case "version":
			d.once(&seen, 6)
			p.Version = d.int64()
		case "spending":
			d.once(&seen, 7)
			p.Spending = new(policy.Spending)
			d.policySpending(p.Spending)
		case "category":
			d.once(&seen, 8)
			p.Category = new(policy.Category)
			d.policyCategory(p.Category)
		case "confirmation":
			d.once(&seen, 9)
			p.Confirmation = new(policy.Confirmation)
			d.policyConfirmation(p.Confirmation)
		case "time_window":
			d.once(&seen, 10)
			p.TimeWindow = new(policy.TimeWindow)
			d.policyTimeWindow(p.TimeWindow)
		default:
			d.unknown(k, reflect.TypeFor[policy.Policy]())
		}
	}
}

func (d *decoder) policyScope(s *policy.Scope) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "agents":
			d.once(&seen, 0)
			s.Agents = d.strings()
		case "business_id":
			d.once(&seen, 1)
			s.BusinessID = d.str()
		default:
			d.unknown(k, reflect.TypeFor[policy.Scope]())
		}
	}
}

func (d *decoder) policySpending(s *policy.Spending) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "per_transaction_cents":
			d.once(&seen, 0)
			s.PerTransactionCents = d.int64()
		case "daily_cents":
			d.once(&seen, 1)
			s.DailyCents = d.int64()
		case "weekly_cents":
			d.once(&seen, 2)
			s.WeeklyCents = d.int64()
		case "monthly_cents":
			d.once(&seen, 3)
			s.MonthlyCents = d.int64()
		case "on_exceed":
			d.once(&seen, 4)
			s.OnExceed = d.enum()
		default:
			d.unknown(k, reflect.TypeFor[policy.Spending]())
		}
	}
}

func (d *decoder) policyCategory(c *policy.Category) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "mode":
			d.once(&seen, 0)
			c.Mode = d.enum()
		case "categories":
			d.once(&seen, 1)
			c.Categories = d.strings()
		default:
			d.unknown(k, reflect.TypeFor[policy.Category]())
		}
	}
}

func (d *decoder) policyConfirmation(c *policy.Confirmation) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "always":
			d.once(&seen, 0)
			c.Always = d.bool()
		case "above_cents":
			d.once(&seen, 1)
			c.AboveCents = d.int64()
		case "first_time_business":
			d.once(&seen, 2)
			c.FirstTimeBusiness = d.bool()
		default:
			d.unknown(k, reflect.TypeFor[policy.Confirmation]())
		}
	}
}

func (d *decoder) policyTimeWindow(w *policy.TimeWindow) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "time_zone":
			d.once(&seen, 0)
			w.TimeZone = d.str()
		case "windows":
			d.once(&seen, 1)
			if d.null() {
				w.Windows = nil
				continue
			}
			w.Windows = []policy.Window{}
			d.array(func() {
				w.Windows = append(w.Windows, policy.Window{})
				d.policyWindow(&w.Windows[len(w.Windows)-1])
			})
		case "outside":
			d.once(&seen, 2)
			w.Outside = d.enum()
		default:
			d.unknown(k, reflect.TypeFor[policy.TimeWindow]())
		}
	}
}

func (d *decoder) policyWindow(w *policy.Window) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "days":
			d.once(&seen, 0)
			w.Days = d.strings()
		case "start":
			d.once(&seen, 1)
			w.Start = d.enum()
		case "end":
			d.once(&seen, 2)
			w.End = d.enum()
		default:
			d.unknown(k, reflect.TypeFor[policy.Window]())
		}
	}
}
