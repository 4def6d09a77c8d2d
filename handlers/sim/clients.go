package sim

import (
	"encoding/json"
	"fmt"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/command"
)

// token is the agent token every simulated agent presents.
const token = "qwed_agent_sim"

// clients are the agents and principals sending commands, through the
// domain's commands as a transport builds them. They know what their
// acknowledged replies told them: the agents registered, each
// conversation's last step, the actions open for an execution or a
// resolution.
type clients struct {
	n      int
	sent   []*domain.Command
	agents []*agent
	// open are approved or pending actions: id → the agent and the cost
	// reserved, for executions (never reporting more than reserved, so
	// that a daily cost over budget is the gate's fault) and resolutions.
	open    []openAction
	agentOf map[string]*agent
	// a2aBurst are A2A messages of one pair queued to be sent next (a
	// burst, so that the pair's bucket runs dry); a2aConfigured is set
	// once the first A2A configuration was sent.
	a2aBurst      []*domain.Command
	a2aConfigured bool
	// exec is the consumer policy engine's traffic (execclients.go).
	exec execClients
}

type agent struct {
	id    string
	steps map[string]int64
}

type openAction struct {
	action, approval, agent string
	reserved                domain.USD
}

var (
	actionTypes = []string{"calculate", "execute_sql", "api_call", "send_email", "read_file", "delete_file", "unknown_thing"}
	queries     = []string{"SELECT 1", "2+2", "UPDATE t SET a = 1 WHERE id = 2", "DELETE FROM t"}
	toolNames   = []string{"search", "send_email", "execute_code", "mystery_tool"}
)

// next is a new command from a client.
func (c *clients) next(w *world) *domain.Command {
	c.n++
	r := w.r
	tok := command.HashSecret(token)
	cmd := &domain.Command{Request: domain.RequestID{Source: "sim", ID: fmt.Sprint("r", c.n)}}
	if len(c.a2aBurst) > 0 {
		m := c.a2aBurst[0]
		c.a2aBurst = c.a2aBurst[1:]
		cmd.Type, cmd.Principal, cmd.A2A = m.Type, m.Principal, m.A2A
		c.sent = append(c.sent, cmd)
		return cmd
	}
	if r.IntN(6) == 0 {
		c.a2aCommand(w, cmd)
		c.sent = append(c.sent, cmd)
		return cmd
	}
	if len(c.agents) > 0 && r.IntN(5) == 0 {
		c.execCommand(w, cmd)
		c.sent = append(c.sent, cmd)
		return cmd
	}
	switch p := r.IntN(100); {
	case len(c.agents) == 0 || p < 5:
		tl := domain.TrustLevel(r.IntN(4))
		cmd.Type, cmd.Principal = domain.CmdRegisterAgent, domain.AdminPrincipal
		cmd.Register = &domain.RegisterAgent{
			Agent: domain.AgentInfo{Name: fmt.Sprint("bot-", c.n), Type: "autonomous", PrincipalID: "org_1"},
			Budget: domain.Limits{MaxDailyCost: domain.USD(r.IntN(3)+1) * domain.MicrosPerUSD,
				MaxRequestsPerHour: int64(r.IntN(40) + 5), MaxToolCallsPerHour: int64(r.IntN(5) + 1)},
			TrustLevel: &tl, TokenHash: tok,
		}
	case p < 60:
		a := c.agents[r.IntN(len(c.agents))]
		conv := fmt.Sprint("c", r.IntN(3))
		step := a.steps[conv] + 1
		if r.IntN(8) == 0 {
			step = max(1, step-1-int64(r.IntN(2))) // a replayed or out-of-order step
		}
		cmd.Type, cmd.AgentID, cmd.TokenHash = domain.CmdVerifyAction, a.id, tok
		cmd.Verify = &domain.VerifyAction{
			Action: domain.Action{Type: actionTypes[r.IntN(len(actionTypes))], Query: queries[r.IntN(len(queries))],
				EstimatedCost: domain.USD(r.IntN(400_000))},
			Context: domain.ActionContext{ConversationID: conv, StepNumber: json.Number(fmt.Sprint(step))},
		}
		cmd.Verify.Options.RequireAttestation = r.IntN(4) == 0
		if r.IntN(20) == 0 {
			cmd.TokenHash = command.HashSecret("qwed_agent_wrong")
		}
	case p < 72:
		a := c.agents[r.IntN(len(c.agents))]
		cmd.Type, cmd.AgentID, cmd.TokenHash = domain.CmdVerifyToolCall, a.id, tok
		cmd.Tool = &domain.VerifyToolCall{ToolCall: domain.ToolCall{ToolName: toolNames[r.IntN(len(toolNames))], Parameters: json.RawMessage(`{"to":"x"}`)}}
	case p < 84 && len(c.open) > 0:
		o := c.open[r.IntN(len(c.open))]
		cmd.Type, cmd.AgentID, cmd.TokenHash = domain.CmdLogExecution, o.agent, tok
		cmd.Execution = &domain.LogExecution{ActionID: o.action, Success: r.IntN(5) > 0,
			CostUSD: domain.USD(r.Int64N(int64(o.reserved) + 1)), Tokens: int64(r.IntN(500))}
	case p < 92 && len(c.open) > 0:
		o := c.open[r.IntN(len(c.open))]
		cmd.Type, cmd.Principal = domain.CmdResolveApproval, "org_1"
		cmd.Resolve = &domain.ResolveApproval{ApprovalID: o.approval, Approve: r.IntN(2) == 0, Reason: "sim"}
	case p < 96:
		a := c.agents[r.IntN(len(c.agents))]
		cmd.Type, cmd.AgentID, cmd.Principal = domain.CmdSuspendAgent, a.id, "org_1"
		cmd.Suspend = &domain.SuspendAgent{Suspended: r.IntN(3) == 0, Reason: "sim"}
	default:
		a := c.agents[r.IntN(len(c.agents))]
		cmd.Type, cmd.AgentID, cmd.Principal = domain.CmdSetTrustLevel, a.id, "org_1"
		cmd.SetTrust = &domain.SetTrustLevel{Level: domain.TrustLevel(r.IntN(4)), Reason: "sim"}
	}
	c.sent = append(c.sent, cmd)
	return cmd
}

// retry is a command sent before, sent again (a client's retry, or the
// partition redelivering it), or nil when none was sent.
func (c *clients) retry(w *world) *domain.Command {
	if len(c.sent) == 0 {
		return nil
	}
	// Mostly recent ones: a client retries soon.
	i := len(c.sent) - 1 - w.r.IntN(min(len(c.sent), 40))
	if w.r.IntN(4) == 0 {
		i = w.r.IntN(len(c.sent))
	}
	return c.sent[i]
}

// learn takes in the acknowledged reply ev to cmd.
func (c *clients) learn(cmd *domain.Command, ev *domain.Event) {
	if ev == nil {
		return
	}
	if c.agentOf == nil {
		c.agentOf = map[string]*agent{}
	}
	c.learnExec(ev)
	switch {
	case ev.Registered != nil:
		if c.agentOf[ev.Registered.AgentID] == nil {
			a := &agent{id: ev.Registered.AgentID, steps: map[string]int64{}}
			c.agents = append(c.agents, a)
			c.agentOf[a.id] = a
		}
	case ev.Decided != nil && cmd.Verify != nil:
		d := ev.Decided
		if d.Decision != domain.Approved && d.Decision != domain.Pending {
			return
		}
		if a := c.agentOf[ev.AgentID]; a != nil && d.Step > a.steps[cmd.Verify.Context.ConversationID] {
			a.steps[cmd.Verify.Context.ConversationID] = d.Step
		}
		o := openAction{action: d.ActionID, approval: d.ActionID, agent: ev.AgentID, reserved: d.ReservedCost}
		if d.Approval != nil {
			o.approval = d.Approval.ID
		}
		c.open = append(c.open, o)
		if len(c.open) > 64 {
			c.open = c.open[len(c.open)-64:]
		}
	}
}

// a2aAgents are the agents of the simulated agent-to-agent traffic.
var a2aAgents = []string{"a2a-0", "a2a-1", "a2a-2", "a2a-3", "a2a-4"}

// a2aPayloads are payloads of each type, verified and not.
var a2aPayloads = []struct {
	typ     a2a.PayloadType
	payload string
}{
	{a2a.PayloadGeneral, `{"message":"Hello!"}`},
	{a2a.PayloadDataQuery, `{"query":"balance","account":7}`},
	{a2a.PayloadFinancial, `{"data":{"claimed_total":150.00,"line_items":[{"amount":50.00,"quantity":2},{"amount":25.00,"quantity":2}]}}`},
	{a2a.PayloadFinancial, `{"data":{"claimed_total":999.99,"line_items":[{"amount":50.00,"quantity":2}]}}`},
	{a2a.PayloadLogic, `{"assertions":[{"claim":"budget_approved"},{"claim":"budget_approved","negated":true}]}`},
	{a2a.PayloadLogic, `{"assertions":[{"claim":"in_stock"}]}`},
	{a2a.PayloadCode, `{"code":"import subprocess as sp\nsp.run(['ls'])"}`},
	{a2a.PayloadCode, `{"code":"total = sum(x for x in range(10))"}`},
	{a2a.PayloadFinancial, `{"data":{"claimed_total":"NaN","line_items":[]}}`},
}

// a2aCommand makes cmd an agent-to-agent command: mostly a message (a
// principal's or the admin's; a third of them a burst on one hot pair),
// else a boundary change, now and then a new A2A configuration (small
// buckets, so that pairs are rate limited and evicted as time passes; the
// first one allows every agent not blocked).
func (c *clients) a2aCommand(w *world, cmd *domain.Command) {
	r := w.r
	pick := func() string { return a2aAgents[r.IntN(len(a2aAgents))] }
	cmd.Principal = "org_1"
	if r.IntN(10) == 0 {
		cmd.Principal = domain.AdminPrincipal
	}
	p := r.IntN(100)
	if !c.a2aConfigured {
		p = 99
	}
	switch {
	case p < 25:
		cmd.Type = domain.CmdA2AMessage
		cmd.A2A = &a2a.Message{SenderAgentID: "a2a-0", ReceiverAgentID: "a2a-1", PayloadType: a2a.PayloadGeneral, Payload: json.RawMessage(`{"n":1}`)}
		for range r.IntN(4) + 1 {
			c.a2aBurst = append(c.a2aBurst, cmd)
		}
	case p < 70:
		pl := a2aPayloads[r.IntN(len(a2aPayloads))]
		cmd.Type = domain.CmdA2AMessage
		cmd.A2A = &a2a.Message{SenderAgentID: pick(), ReceiverAgentID: pick(), PayloadType: pl.typ, Payload: json.RawMessage(pl.payload)}
		if r.IntN(3) == 0 {
			cmd.A2A.TraceID = fmt.Sprint("trace-", cmd.Request.ID)
		}
	case p < 95:
		ops := []string{domain.A2AOpTrust, domain.A2AOpTrust, domain.A2AOpUntrust, domain.A2AOpBlock, domain.A2AOpUnblock,
			domain.A2AOpBlockPair, domain.A2AOpUnblockPair}
		ch := &domain.A2ABoundaryChange{Op: ops[r.IntN(len(ops))]}
		if ch.Op == domain.A2AOpBlockPair || ch.Op == domain.A2AOpUnblockPair {
			ch.Sender, ch.Receiver = pick(), pick()
		} else {
			ch.Agent = pick()
		}
		cmd.Type, cmd.A2ABoundary = domain.CmdA2ABoundary, ch
	default:
		cfg := domain.DefaultConfig()
		a := domain.DefaultA2AConfig()
		a.RatePerMinute, a.Burst, a.DefaultAllow = int64(r.IntN(6)+1), int64(r.IntN(4)+1), !c.a2aConfigured || r.IntN(3) > 0
		a.BlockOnError = r.IntN(2) == 0
		c.a2aConfigured = true
		cfg.A2A = &a
		cmd.Type, cmd.Principal, cmd.Configure = domain.CmdConfigure, domain.AdminPrincipal, &domain.Configure{Config: cfg}
	}
}
