package sim

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/policy"
	"github.com/agentgate/agentgate/handlers/command"
)

// simDailyCents is the daily limit of the simulated consumer's spending
// policy: check holds every consumer's rolling day under it.
const simDailyCents = 5000

// execClients are the simulated consumer's side of the policy engine:
// the business and policies it set up, the confirmation tokens its
// agents prepared, the transactions executing (for the adapter's
// outcomes) and pending its approval.
type execClients struct {
	business, capped bool
	confirmAbove     bool
	tokens           []preparedToken
	executing        []string
	approvals        []string
}

type preparedToken struct {
	agent, token, body string
}

// execCommand makes cmd a command of the consumer policy engine: first
// the business and the consumer's policies, then prepares, executes (with
// the token prepared, another, or none), the business's outcomes, the
// consumer's answers to execute approvals, and now and then a new
// execute mode.
func (c *clients) execCommand(w *world, cmd *domain.Command) {
	r, x := w.r, &c.exec
	agent := func() string { return c.agents[r.IntN(len(c.agents))].id }
	switch p := r.IntN(100); {
	case !x.business:
		cmd.Type, cmd.Principal = domain.CmdBusiness, domain.AdminPrincipal
		cmd.Business = &domain.BusinessChange{Op: domain.OpCreate, Business: domain.Business{ID: "shop", Name: "Shop",
			Categories: []string{"food"}, Endpoint: "https://shop.example/agp", Currency: "USD"}}
	case !x.capped:
		cmd.Type, cmd.Principal = domain.CmdPolicy, "org_1"
		cmd.Policy = &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "daily-cap", Type: policy.TypeSpending,
			Spending: &policy.Spending{DailyCents: simDailyCents, OnExceed: policy.OnExceedBlock}}}
	case !x.confirmAbove:
		cmd.Type, cmd.Principal = domain.CmdPolicy, "org_1"
		cmd.Policy = &domain.PolicyChange{Op: domain.OpCreate, Policy: policy.Policy{ID: "big-ones", Type: policy.TypeConfirmation,
			Confirmation: &policy.Confirmation{AboveCents: 1500}}}
	case p < 8:
		cfg := domain.DefaultConfig()
		cfg.Execute = &domain.ExecuteConfig{Mode: []string{domain.ExecuteModeOpen, domain.ExecuteModeConfirm, domain.ExecuteModeStrict}[r.IntN(3)],
			MaxAmountCents: 2000, TokenTTL: domain.Duration(5 * time.Minute)}
		cmd.Type, cmd.Principal, cmd.Configure = domain.CmdConfigure, domain.AdminPrincipal, &domain.Configure{Config: cfg}
	case p < 35:
		t := preparedToken{agent: agent(), token: fmt.Sprint("qwed_ct_sim", c.n), body: fmt.Sprintf(`{"amount_cents":%d,"n":%d}`, r.IntN(2500), c.n)}
		simExecute(cmd, domain.CmdPrepareExecute, t.agent, t.body, command.HashSecret(t.token))
		x.tokens = append(x.tokens, t)
		if len(x.tokens) > 32 {
			x.tokens = x.tokens[len(x.tokens)-32:]
		}
	case p < 75:
		t := preparedToken{agent: agent(), body: fmt.Sprintf(`{"amount":"%d.%02d"}`, r.IntN(20), r.IntN(100))}
		if len(x.tokens) > 0 && r.IntN(4) > 0 {
			t = x.tokens[r.IntN(len(x.tokens))]
			if r.IntN(6) == 0 {
				t.body = `{"amount_cents":1}` // a request the token is not bound to
			}
		}
		tok := ""
		if t.token != "" {
			tok = command.HashSecret(t.token)
		}
		simExecute(cmd, domain.CmdExecute, t.agent, t.body, tok)
	case p < 90 && len(x.executing) > 0:
		i := r.IntN(len(x.executing))
		o := &domain.ExecuteOutcome{TransactionID: x.executing[i], HTTPStatus: 200, Status: "confirmed", Data: json.RawMessage(`{"ok":true}`)}
		switch r.IntN(5) {
		case 0:
			o.HTTPStatus, o.Status, o.Error = 502, "", "the business did not answer"
		case 1:
			o.Status, o.ConfirmationToken = domain.TxPendingConfirmation, "biz-tok"
		}
		if r.IntN(3) > 0 {
			x.executing = append(x.executing[:i], x.executing[i+1:]...)
		}
		cmd.Type, cmd.Request.Source, cmd.Outcome = domain.CmdExecuteOutcome, "agentgate/adapter", o
	case len(x.approvals) > 0:
		i := r.IntN(len(x.approvals))
		cmd.Type, cmd.Principal = domain.CmdResolveApproval, "org_1"
		cmd.Resolve = &domain.ResolveApproval{ApprovalID: x.approvals[i], Approve: r.IntN(2) == 0, Reason: "sim"}
		x.approvals = append(x.approvals[:i], x.approvals[i+1:]...)
	default:
		simExecute(cmd, domain.CmdExecute, agent(), `{}`, "")
	}
}

// simExecute makes cmd an agent's prepare or execute as the transports
// build it (the request's RFC 8785 hash, the token's hash).
func simExecute(cmd *domain.Command, typ domain.CommandType, agent, body, tokenHash string) {
	h, err := domain.RequestHashOf([]byte(body))
	if err != nil {
		panic(err) // the bodies above are canonicalizable
	}
	cmd.Type, cmd.AgentID, cmd.TokenHash = typ, agent, command.HashSecret(token)
	cmd.Execute = &domain.ExecuteRequest{BusinessID: "shop", Request: json.RawMessage(body), RequestHash: h, TokenHash: tokenHash}
}

// learnExec takes in an acknowledged event of the policy engine.
func (c *clients) learnExec(ev *domain.Event) {
	x := &c.exec
	switch {
	case ev.Type == domain.EvBusinessChanged:
		x.business = true
	case ev.Type == domain.EvPolicyChanged && ev.Policy != nil:
		x.capped = x.capped || ev.Policy.ID == "daily-cap"
		x.confirmAbove = x.confirmAbove || ev.Policy.ID == "big-ones"
	case ev.Transaction != nil && ev.Transaction.Status == domain.TxExecuting:
		x.executing = append(x.executing, ev.Transaction.ID)
	case ev.Transaction != nil && ev.Transaction.Status == domain.TxPendingApproval:
		x.approvals = append(x.approvals, ev.Transaction.ID)
	case ev.Timers != nil:
		x.executing = append(x.executing, ev.Timers.Released...)
	}
	if len(x.executing) > 64 {
		x.executing = x.executing[len(x.executing)-64:]
	}
}
