package eventjson_test

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// execFixtures adds the fixtures of the consumer policy engine (issue 14):
// the business registry, a prepare, an execute of each status, the
// business's outcome, the execute tick, an execute approval's resolution,
// a configuration with an execute mode, a copied business and a §2.4
// refusal.
func execFixtures(base func(uint64, domain.EventType) *domain.Event, req domain.RequestID, evs map[string]*domain.Event) {
	at := time.Date(2026, 11, 24, 9, 30, 0, 123456000, time.UTC)
	agent := "agent_0123456789abcdef"
	shop := domain.Business{ID: "coffee-shop", Name: "Coffee & Co <Paris>", Categories: []string{"food", "retail"},
		Endpoint: "https://coffee.example/agp/execute", Currency: "EUR", Owner: "org_shop"}
	{
		ev := base(30, domain.EvBusinessChanged)
		ev.AgentID = ""
		b := shop
		b.Owner = ""
		ev.Command = &domain.Command{Type: domain.CmdBusiness, Request: req, Principal: "org_shop", Global: true,
			Business: &domain.BusinessChange{Op: domain.OpCreate, Business: b}}
		ev.Business = &shop
		evs["type.business.changed"] = ev
	}
	{
		ev := base(31, domain.EvBusinessChanged)
		ev.AgentID = ""
		ev.Command = &domain.Command{Type: domain.CmdBusiness, Request: req, Principal: "org_shop", Global: true,
			Business: &domain.BusinessChange{Op: domain.OpDelete, Business: domain.Business{ID: "coffee-shop"}}}
		ev.Business = &domain.Business{ID: "coffee-shop"}
		evs["type.business.changed.delete"] = ev
	}
	request := json.RawMessage(`{"item":"espresso","amount":"2.50","notes":"<no sugar>"}`)
	reqHash := "sha256:" + strings.Repeat("9f", 32)
	tok := strings.Repeat("7c", 32)
	agentTok := strings.Repeat("a1", 32)
	execReq := func(id string) domain.RequestID {
		return domain.RequestID{Source: "http", ID: id, Scope: "token:" + agentTok[:32]}
	}
	{
		ev := base(32, domain.EvExecutePrepared)
		ev.Command = &domain.Command{Type: domain.CmdPrepareExecute, Request: execReq("prep-1"), AgentID: agent, TokenHash: agentTok,
			Execute: &domain.ExecuteRequest{BusinessID: "coffee-shop", Request: request, RequestHash: reqHash, TokenHash: tok}}
		ev.Prepared = &domain.ExecutePrepared{TokenHash: tok, BusinessID: "coffee-shop", RequestHash: reqHash,
			Summary: "Coffee & Co <Paris>: 2.50 EUR", Consumer: "org_1", AgentID: agent, ExpiresAt: at.Add(5 * time.Minute)}
		evs["type.execute.prepared"] = ev
	}
	tx := func(status string) *domain.Transaction {
		return &domain.Transaction{ID: "tx_0123456789abcdef01234567", Consumer: "org_1", AgentID: agent, BusinessID: "coffee-shop",
			Categories: []string{"food", "retail"}, AmountCents: 250, Currency: "EUR", RequestHash: reqHash, Status: status, CreatedAt: at}
	}
	decided := func(seq uint64, name string, t *domain.Transaction, e *domain.Error, consumed bool) {
		ev := base(seq, domain.EvExecuteDecided)
		ev.Command = &domain.Command{Type: domain.CmdExecute, Request: execReq("exec-" + name), AgentID: agent, TokenHash: agentTok,
			Execute: &domain.ExecuteRequest{BusinessID: "coffee-shop", Request: request, RequestHash: reqHash}}
		if consumed {
			ev.Command.Execute.TokenHash = tok
			ev.Prepared = &domain.ExecutePrepared{TokenHash: tok, BusinessID: "coffee-shop", RequestHash: reqHash,
				Summary: "Coffee & Co <Paris>: 2.50 EUR", Consumer: "org_1", AgentID: agent, ExpiresAt: at.Add(5 * time.Minute)}
		}
		ev.Transaction, ev.Error = t, e
		evs["type.execute.decided."+name] = ev
	}
	decided(33, "executing", tx(domain.TxExecuting), nil, true)
	blocked := tx(domain.TxBlocked)
	blocked.PolicyID, blocked.Limit = "daily-cap", "daily 1000 cents"
	blocked.Notices = []domain.Notice{{Kind: domain.NoticeBlocked, PolicyID: "daily-cap", Message: "blocked by policy daily-cap: daily 1000 cents"}}
	decided(34, "blocked", blocked, &domain.Error{Code: domain.CodePolicySpending, Message: "blocked by policy daily-cap: daily 1000 cents",
		Details: map[string]any{"limit": "daily 1000 cents", "policy_id": "daily-cap", "transaction_id": blocked.ID}}, false)
	pending := tx(domain.TxPendingApproval)
	pending.PolicyID, pending.ApprovalID = "confirm-first", pending.ID
	pending.Notices = []domain.Notice{{Kind: domain.NoticeConfirmNeeded, PolicyID: "confirm-first", Message: "confirmation required by policy confirm-first"}}
	decided(35, "pending_approval", pending, nil, false)
	queued := tx(domain.TxQueued)
	release := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	queued.PolicyID, queued.Limit, queued.ReleaseAt = "office-hours", "mon-fri 09:00-17:30 Europe/Paris", &release
	queued.Notices = []domain.Notice{{Kind: domain.NoticeQueued, PolicyID: "office-hours", Message: "queued until 2026-11-24T17:00:00Z"}}
	decided(36, "queued", queued, nil, false)
	outcome := func(seq uint64, name string, o domain.ExecuteOutcome, t *domain.Transaction, e *domain.Error) {
		ev := base(seq, domain.EvExecuteCompleted)
		ev.Command = &domain.Command{Type: domain.CmdExecuteOutcome, Request: domain.RequestID{Source: "agentgate/adapter", ID: "tx_0123456789abcdef01234567"},
			Outcome: &o}
		ev.Transaction, ev.Error = t, e
		evs["type.execute.completed."+name] = ev
	}
	done := tx(domain.TxCompleted)
	done.BusinessStatus, done.Data = "confirmed", json.RawMessage(`{"order_id":"o-42","eta":"5 min"}`)
	outcome(37, "completed", domain.ExecuteOutcome{TransactionID: done.ID, HTTPStatus: 200, Status: "confirmed", Data: done.Data}, done, nil)
	failed := tx(domain.TxFailed)
	failed.BusinessStatus = ""
	outcome(38, "failed", domain.ExecuteOutcome{TransactionID: failed.ID, HTTPStatus: 503, Error: "the business answered 503 after 3 attempts"}, failed,
		&domain.Error{Code: domain.CodeExecBusinessFailed, Message: "Business call failed: the business answered 503 after 3 attempts",
			Details: map[string]any{"business_id": "coffee-shop", "http_status": 503, "transaction_id": failed.ID}})
	confirm := tx(domain.TxPendingConfirmation)
	confirm.BusinessStatus, confirm.ConfirmationToken = domain.TxPendingConfirmation, "biz_confirm_123"
	outcome(39, "pending_confirmation", domain.ExecuteOutcome{TransactionID: confirm.ID, HTTPStatus: 200, Status: domain.TxPendingConfirmation,
		ConfirmationToken: "biz_confirm_123"}, confirm, nil)
	{
		ev := base(40, domain.EvExecuteTimers)
		ev.AgentID = ""
		ev.Command = &domain.Command{Type: domain.CmdExecuteTick}
		ev.Timers = &domain.ExecuteTimers{TokensExpired: []string{tok}, Released: []string{"tx_0123456789abcdef01234567"}, Expired: []string{"tx_89abcdef0123456789abcdef"}}
		evs["type.execute.timers"] = ev
	}
	{
		ev := base(41, domain.EvApprovalResolved)
		ev.Command = &domain.Command{Type: domain.CmdResolveApproval, Request: req, Principal: "org_1",
			Resolve: &domain.ResolveApproval{ApprovalID: pending.ID, Approve: true, Reason: "ok, go"}}
		resolved := at.Add(time.Minute)
		ev.Resolved = &domain.ApprovalResolved{Approval: domain.Approval{ID: pending.ID, AgentID: agent, PrincipalID: "org_1",
			Kind: domain.ApprovalKindExecute, Status: domain.ApprovalApproved, Summary: "execute at coffee-shop: 2.50 EUR (policy confirm-first)",
			CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour), ResolvedAt: &resolved, ResolvedBy: "org_1", Reason: "ok, go", TransactionID: pending.ID}}
		approved := tx(domain.TxExecuting)
		approved.PolicyID, approved.ApprovalID = "confirm-first", pending.ID
		ev.Transaction = approved
		evs["type.approval.resolved.execute"] = ev
	}
	{
		ev := base(42, domain.EvConfigured)
		ev.AgentID = ""
		cfg := domain.Config{ApprovalTTL: domain.Duration(24 * time.Hour), MaxSteps: 50, WithholdRefusals: true, EngineSQLRisk: true,
			Execute: &domain.ExecuteConfig{Mode: domain.ExecuteModeStrict, MaxAmountCents: 100, TokenTTL: domain.Duration(5 * time.Minute)}}
		ev.Configured = &cfg
		ev.Command = &domain.Command{Type: domain.CmdConfigure, Request: req, Principal: domain.AdminPrincipal, Configure: &domain.Configure{Config: cfg}}
		evs["type.gate.configured.execute"] = ev
	}
	{
		ev := base(43, domain.EvPrincipalStateCopied)
		ev.AgentID, ev.Partition = "", 2
		ev.Command = &domain.Command{Type: domain.CmdCopyPrincipalState, Request: domain.RequestID{Source: "agentgate/global", ID: "0/31"},
			Copy: &domain.PrincipalStateCopy{From: 0, Seq: 31, Hash: strings.Repeat("ef", 32), Offset: 60, Changes: []domain.CopiedChange{
				{Seq: 30, Type: domain.EvBusinessChanged, Business: &shop},
				{Seq: 31, Type: domain.EvBusinessChanged, Business: &domain.Business{ID: "coffee-shop"}},
			}}}
		evs["type.principal.state_copied.business"] = ev
	}
	{
		ev := base(44, domain.EvCommandRejected)
		ev.Command = &domain.Command{Type: domain.CmdExecute, Request: execReq("exec-replayed"), AgentID: agent, TokenHash: agentTok,
			Execute: &domain.ExecuteRequest{BusinessID: "coffee-shop", Request: request, RequestHash: reqHash, TokenHash: tok}}
		ev.Error = &domain.Error{Code: domain.CodeExecTokenInvalid, Message: domain.MsgExecTokenInvalid}
		evs["type.command.rejected.execute_token"] = ev
	}
}
