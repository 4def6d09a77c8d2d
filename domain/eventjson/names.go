package eventjson

import (
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/domain/engines"
)

// names are the strings that recur in every event (event and command
// types, decisions, codes, check names, action types, the keys and values
// of error details): the decoder returns these shared constants instead
// of allocating a copy per event. A string missing here is only allocated;
// the table changes no result.
var names = newInternTable(func() []string {
	list := []string{
		// Event and command types.
		string(domain.EvAgentRegistered), string(domain.EvActionDecided), string(domain.EvExecutionLogged),
		string(domain.EvTrustElevationRequested), string(domain.EvApprovalResolved), string(domain.EvTrustChanged),
		string(domain.EvAgentStatusChanged), string(domain.EvToolRegistrySet), string(domain.EvPrincipalKeyIssued),
		string(domain.EvConfigured), string(domain.EvApprovalsExpired), string(domain.EvCommandRejected),
		string(domain.EvLogCheckpointed), string(domain.EvQWEDVerified), string(domain.EvPrincipalKeyRevoked),
		string(domain.EvAgentTokenRotated), string(domain.EvAgentTokenRevoked),
		string(domain.EvA2AVerdict), string(domain.EvA2ABoundaryChanged),
		string(domain.CmdA2AMessage), string(domain.CmdA2ABoundary),
		string(domain.EvPrincipalStateCopied), string(domain.CmdCopyPrincipalState),
		string(domain.CmdRegisterAgent), string(domain.CmdVerifyAction), string(domain.CmdVerifyToolCall),
		string(domain.CmdLogExecution), string(domain.CmdRequestTrust), string(domain.CmdResolveApproval),
		string(domain.CmdSetTrustLevel), string(domain.CmdSuspendAgent), string(domain.CmdFileComplaint),
		string(domain.CmdPutToolRegistry), string(domain.CmdIssuePrincipalKey), string(domain.CmdConfigure),
		string(domain.CmdTick), string(domain.CmdRejectRequest), string(domain.CmdQWEDVerify),
		string(domain.CmdRevokePrincipalKey), string(domain.CmdRotateAgentToken), string(domain.CmdRevokeAgentToken),
		string(domain.CmdPutPrincipalPermissions), string(domain.EvPrincipalPermissionsSet),
		// Decisions, kinds, statuses.
		string(domain.Approved), string(domain.Denied), string(domain.Corrected), string(domain.Pending),
		string(domain.BudgetExceeded), string(domain.KindAction), string(domain.KindTool),
		string(domain.ApprovalPending), string(domain.ApprovalApproved), string(domain.ApprovalDenied),
		string(domain.ApprovalExpired), domain.StatusActive, domain.StatusSuspended, "trust_elevation",
		string(engines.Verified), string(engines.Failed), string(engines.Corrected), string(engines.Blocked),
		string(engines.Error), string(engines.Timeout), string(engines.Unsupported), domain.StatusSkipped,
		string(domain.RiskLow), string(domain.RiskMedium), string(domain.RiskHigh), string(domain.RiskCritical),
		"info", domain.AdminPrincipal, "http",
		// A2A payload types, statuses, engines and boundary operations.
		string(a2a.PayloadFinancial), string(a2a.PayloadLogic), string(a2a.PayloadCode),
		string(a2a.PayloadDataQuery), string(a2a.PayloadGeneral),
		string(a2a.StatusForwarded), string(a2a.StatusBlocked), string(a2a.StatusRateLimited), string(a2a.StatusError),
		a2a.EngineBypass, a2a.EnginePassthrough, a2a.EngineFinance, a2a.EngineLogic, a2a.EngineCode, a2a.EngineTrust,
		domain.A2AOpTrust, domain.A2AOpUntrust, domain.A2AOpBlock, domain.A2AOpUnblock,
		domain.A2AOpBlockPair, domain.A2AOpUnblockPair,
		// The consumer policy engine: types, operations, modes, statuses.
		string(domain.CmdBusiness), string(domain.CmdPrepareExecute), string(domain.CmdExecute),
		string(domain.CmdExecuteOutcome), string(domain.CmdExecuteTick), string(domain.CmdPolicy),
		string(domain.CmdWebhook), string(domain.CmdDelivery),
		string(domain.EvBusinessChanged), string(domain.EvExecutePrepared), string(domain.EvExecuteDecided),
		string(domain.EvExecuteCompleted), string(domain.EvExecuteTimers), string(domain.EvPolicyChanged),
		string(domain.EvWebhookChanged), string(domain.EvDeliveryRecorded),
		string(domain.CmdAgentBlocked), string(domain.EvAgentBlockRelayed), domain.NoticeAgentBlocked,
		domain.OpCreate, domain.OpUpdate, domain.OpDelete,
		domain.ExecuteModeOpen, domain.ExecuteModeConfirm, domain.ExecuteModeStrict,
		domain.TxExecuting, domain.TxBlocked, domain.TxPendingApproval, domain.TxQueued, domain.TxCompleted,
		domain.TxFailed, domain.TxPendingConfirmation, domain.TxDenied, domain.TxExpired,
		domain.NoticeBlocked, domain.NoticeConfirmNeeded, domain.NoticeQueued, domain.NoticeLimit80,
		domain.ApprovalKindExecute, "USD", "EUR", "GBP", "JPY",
		// Checks of verification.checks_passed / checks_failed.
		"context_valid", "within_step_limit", "no_replay", "no_repetition", "no_doom_loop",
		"action_type_known", "tool_allowed", "engine_allowed", "no_sql_injection", "read_only_query",
		"trust_sufficient", "within_budget", "attestation_issued", "engine_verified",
		// Action types and engines.
		"calculate", "verify_logic", "execute_sql", "execute_code", "tool_call", "api_call",
		"network_request", "read_file", "file_read", "write_file", "file_write", "delete_file",
		"file_delete", "database_read", "database_write", "send_email", "send_message",
		"math", "logic", "sql", "code", "tool", "policy", "security",
		// Keys of error details.
		"action_type", "agent_id", "consecutive", "current", "engine", "field", "fingerprint",
		"last_step", "limit", "limit_name", "max_steps", "occurrences", "outcome_digest", "reason",
		"requested", "reset_at", "risk_level", "risk_score", "state_fingerprint", "statement",
		"status", "step_number", "trust_level", "window",
		// Budget dimensions named in details.
		"max_daily_cost_usd", "max_per_request_cost_usd", "max_requests_per_hour", "max_requests_per_day",
		"max_tokens_per_request", "max_daily_tokens", "max_tool_calls_per_hour", "max_high_risk_calls_per_day",
	}
	for _, c := range domain.Catalogue {
		list = append(list, string(c.Code))
	}
	return list
}())

// internTable finds a string among a fixed set without allocating: an
// open-addressing table indexed by a hash of the length and of three bytes
// (cheaper than a map's hash of every byte; the set is small and its
// strings differ there).
type internTable struct {
	slots []string
	mask  int
}

func newInternTable(list []string) *internTable {
	size := 1
	for size < 4*len(list) {
		size *= 2
	}
	t := &internTable{slots: make([]string, size), mask: size - 1}
	for _, s := range list {
		if s == "" {
			continue
		}
		i := t.hash([]byte(s))
		for t.slots[i] != "" && t.slots[i] != s {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
	}
	return t
}

func (t *internTable) hash(b []byte) int {
	n := len(b)
	return (n*0x9e37 ^ int(b[0])*0x3b ^ int(b[n/2])*0x1f1 ^ int(b[n-1])*0x61c9) & t.mask
}

// lookup returns the member of the set equal to b.
func (t *internTable) lookup(b []byte) (string, bool) {
	if len(b) == 0 {
		return "", false
	}
	for i := t.hash(b); t.slots[i] != ""; i = (i + 1) & t.mask {
		if t.slots[i] == string(b) {
			return t.slots[i], true
		}
	}
	return "", false
}
