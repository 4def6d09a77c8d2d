package eventjson

import (
	"reflect"

	"github.com/agentgate/agentgate/domain"
)

// The notices of blocked agent decisions (domain/agentnotice.go): encoded
// in struct order under their json tags, decoded as fastevent.go decodes
// the others.

func (e *encoder) decisionNotice(n *domain.DecisionNotice) {
	e.open()
	e.strField("principal_id", n.Principal)
	e.strField("code", string(n.Code))
	e.optStr("check", n.Check)
	e.strField("status", n.Status)
	e.strField("risk_level", string(n.Risk))
	e.close()
}

func (e *encoder) agentNotice(n *domain.AgentNotice) {
	e.open()
	e.strField("principal_id", n.Principal)
	e.strField("agent_id", n.AgentID)
	e.strField("kind", string(n.Kind))
	e.strField("action_id", n.ActionID)
	e.strField("action_type", n.ActionType)
	e.optStr("tool", n.Tool)
	e.strField("decision", string(n.Decision))
	e.strField("status", n.Status)
	e.strField("code", string(n.Code))
	e.optStr("check", n.Check)
	e.strField("risk_level", string(n.Risk))
	e.intField("partition", int64(n.Partition))
	e.uintField("seq", n.Seq)
	e.key("time")
	e.time(n.Time)
	e.close()
}

func (d *decoder) decisionNotice(n *domain.DecisionNotice) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "principal_id":
			d.once(&seen, 0)
			n.Principal = d.str()
		case "code":
			d.once(&seen, 1)
			n.Code = domain.Code(d.enum())
		case "check":
			d.once(&seen, 2)
			n.Check = d.enum()
		case "status":
			d.once(&seen, 3)
			n.Status = d.enum()
		case "risk_level":
			d.once(&seen, 4)
			n.Risk = domain.Risk(d.enum())
		default:
			d.unknown(k, reflect.TypeFor[domain.DecisionNotice]())
		}
	}
}

func (d *decoder) agentNotice(n *domain.AgentNotice) {
	var seen uint64
	d.openObject()
	for k := d.next(); k != nil; k = d.next() {
		switch string(k) {
		case "principal_id":
			d.once(&seen, 0)
			n.Principal = d.str()
		case "agent_id":
			d.once(&seen, 1)
			n.AgentID = d.str()
		case "kind":
			d.once(&seen, 2)
			n.Kind = domain.ActionKind(d.enum())
		case "action_id":
			d.once(&seen, 3)
			n.ActionID = d.str()
		case "action_type":
			d.once(&seen, 4)
			n.ActionType = d.enum()
		case "tool":
			d.once(&seen, 5)
			n.Tool = d.enum()
		case "decision":
			d.once(&seen, 6)
			n.Decision = domain.Decision(d.enum())
		case "status":
			d.once(&seen, 7)
			n.Status = d.enum()
		case "code":
			d.once(&seen, 8)
			n.Code = domain.Code(d.enum())
		case "check":
			d.once(&seen, 9)
			n.Check = d.enum()
		case "risk_level":
			d.once(&seen, 10)
			n.Risk = domain.Risk(d.enum())
		case "partition":
			d.once(&seen, 11)
			n.Partition = d.int32()
		case "seq":
			d.once(&seen, 12)
			n.Seq = d.uint64()
		case "time":
			d.once(&seen, 13)
			d.time(&n.Time)
		default:
			d.unknown(k, reflect.TypeFor[domain.AgentNotice]())
		}
	}
}
