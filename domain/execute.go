package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain/jcs"
	"github.com/agentgate/agentgate/domain/policy"
)

// Executes through the gate (the Agent Policy Engine spec §2, §3.2): the
// rules of prepare, execute, outcome and the execute tick. An execute is
// checked in this order, each refusal a command.rejected event that
// consumes nothing:
//
//  1. the payload, then the agent (QWED-AGENT-001/002/003; on Kafka the
//     agent's partition authenticated it: Command.Authenticated);
//  2. the business (QWED-EXEC-007, 404 "Unknown business");
//  3. the request: a JSON object of at most MaxExecuteRequestBytes, its
//     hash's form, its amount (QWED-REQ-001/004);
//  4. in modes confirm and strict, the confirmation token (§2.4): absent
//     QWED-EXEC-001, unknown (or consumed) QWED-EXEC-002, expired
//     QWED-EXEC-003, bound to another business, request or consumer
//     QWED-EXEC-004, and in strict mode an amount over the ceiling
//     QWED-EXEC-005, each with the spec's exact message (QWED-EXEC-006,
//     an unparseable body, is the transport's refusal: a body that does
//     not parse never becomes a command). The token is consumed (the
//     event's Prepared) only when all of 4 passes; in mode open the
//     header is ignored;
//  5. the consumer's bound of open transactions (QWED-AUTH-004);
//
// then the transaction is recorded: an execute.decided event of status
// executing (the adapter calls the business after the commit point).

// The exact messages of the Agent Policy Engine spec §2.4.
const (
	MsgExecConfirmationRequired = "Execute confirmation required. Provide x-confirmation-token header."
	MsgExecTokenInvalid         = "Invalid confirmation token."
	MsgExecTokenExpired         = "Confirmation token expired. Prepare a new token."
	MsgExecTokenMismatch        = "Confirmation token does not match this execute request."
	MsgExecUnparseable          = "Unable to validate confirmation token for execute payload."
)

// MsgExecAmountExceeded returns §2.4's message of an amount over the
// ceiling of strict mode.
func MsgExecAmountExceeded(limitCents int64) string {
	return "Execute amount exceeds policy limit (" + strconv.FormatInt(limitCents, 10) + " cents)."
}

// More limits of the consumer policy engine.
const (
	// MaxTimersPerTick bounds each list of an execute.timers event; what
	// is due past it is handled by the next tick.
	MaxTimersPerTick = 1000
	// MaxBusinessStatusChars bounds a business's answer status.
	MaxBusinessStatusChars = 64
	// MaxOutcomeTextChars bounds an outcome's error and confirmation
	// token.
	MaxOutcomeTextChars = 1024
	// MaxReplyToChars bounds an execute's reply_to.
	MaxReplyToChars = 2048
)

const idKindTransaction = 5

// transactionIDHexLen is the length, in hex digits, of a transaction ID.
const transactionIDHexLen = 24

// TransactionIDFor returns the transaction ID an execute request mints:
// "tx_" and the first 24 hex digits of its request digest.
func TransactionIDFor(r RequestID) string {
	return derivedID("tx_", idKindTransaction, transactionIDHexLen, r)
}

// execute is what the checks common to prepare and execute found.
type execute struct {
	agentID, consumer string
	business          *Business
	amount            int64
}

// checkExecute runs checks 1 to 3 of a prepare or an execute.
func (d *decider) checkExecute() (execute, *Error) {
	r := d.cmd.Execute
	if r == nil {
		return execute{}, missing("execute")
	}
	var x execute
	agentID, consumer, err := d.executeCaller()
	if err != nil {
		return x, err
	}
	x.agentID, x.consumer = agentID, consumer
	d.ev.AgentID = agentID
	if err := checkBusinessID("businessId", r.BusinessID); err != nil {
		return x, err
	}
	if d.s.Exec != nil {
		x.business = d.s.Exec.Businesses[r.BusinessID]
	}
	if x.business == nil {
		return x, unknownBusiness(r.BusinessID)
	}
	if len(r.Request) > MaxExecuteRequestBytes {
		return x, fieldError(CodeTooLong, "request", "request is larger than %d bytes", MaxExecuteRequestBytes)
	}
	if i := skipWS(r.Request, 0); i >= len(r.Request) || r.Request[i] != '{' || !json.Valid(r.Request) {
		return x, fieldError(CodeInvalidRequest, "request", "must be a JSON object")
	}
	if !isRequestHash(r.RequestHash) {
		return x, fieldError(CodeInvalidRequest, "request_hash", "must be \"sha256:\" and 64 lowercase hex digits")
	}
	if r.TokenHash != "" && !isSHA256Hex(r.TokenHash) {
		return x, fieldError(CodeInvalidRequest, "token_hash", "must be 64 lowercase hex digits (SHA-256)")
	}
	if len(r.ReplyTo) > MaxReplyToChars || !printable(r.ReplyTo) {
		return x, fieldError(CodeInvalidRequest, "reply_to", "must be at most %d printable characters", MaxReplyToChars)
	}
	amount, err := executeAmount(r.Request, x.business.Currency)
	if err != nil {
		return x, err
	}
	x.amount = amount
	return x, nil
}

// RequestHashOf returns the request hash of an execute's request:
// "sha256:" and the hex SHA-256 of its RFC 8785 (JCS) form. The
// transports compute it; a confirmation token is bound to it.
func RequestHashOf(request []byte) (string, error) {
	canon, err := jcs.Transform(request)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(h[:]), nil
}

// isRequestHash reports whether s is "sha256:" and 64 lowercase hex
// digits.
func isRequestHash(s string) bool {
	return len(s) == 7+64 && s[:7] == "sha256:" && isSHA256Hex(s[7:])
}

// rejectExecute refuses a prepare or an execute; a request that is not
// valid JSON (which no transport builds) is dropped from the recorded
// command, whose encoding it would break.
func (d *decider) rejectExecute(err *Error) *Event {
	ev := d.reject(err)
	if c := ev.Command; c != nil && c.Execute != nil && c.Execute.Request != nil && !json.Valid(c.Execute.Request) {
		cc, r := *c, *c.Execute
		r.Request = nil
		cc.Execute = &r
		ev.Command = &cc
	}
	return ev
}

// prepareExecute decides a CmdPrepareExecute: it records the confirmation
// token the transport minted (its hash), bound to the business, the
// request and the consumer, valid for the configured TTL.
func (d *decider) prepareExecute() *Event {
	x, err := d.checkExecute()
	if err != nil {
		return d.rejectExecute(err)
	}
	r := d.cmd.Execute
	if r.TokenHash == "" {
		return d.rejectExecute(missing("token_hash"))
	}
	es := d.s.Exec
	if _, dup := es.Tokens[r.TokenHash]; dup {
		return d.rejectExecute(Errorf(CodeConflict, "the confirmation token already exists"))
	}
	if c := es.Consumers[x.consumer]; c != nil && c.Tokens >= MaxOpenTokens {
		return d.rejectExecute(Errorf(CodeRateLimited, "consumer '%s' already holds %d unexpired confirmation tokens", x.consumer, MaxOpenTokens))
	}
	cfg := d.s.Config.ExecuteConfig()
	d.ev.Type = EvExecutePrepared
	d.ev.Prepared = &ExecutePrepared{
		TokenHash: r.TokenHash, BusinessID: r.BusinessID, RequestHash: r.RequestHash,
		Summary:  x.business.Name + ": " + formatAmount(x.amount, x.business.Currency) + " " + x.business.Currency,
		Consumer: x.consumer, AgentID: x.agentID, ExpiresAt: d.now.Add(time.Duration(cfg.TokenTTL)),
	}
	return d.ev
}

// execError is a refusal of §2.4: the spec's message, the gate's code.
func execError(code Code, msg string) *Error {
	return &Error{Code: code, Message: msg}
}

// executeCmd decides a CmdExecute (see the order above).
func (d *decider) executeCmd() *Event {
	x, err := d.checkExecute()
	if err != nil {
		return d.rejectExecute(err)
	}
	r := d.cmd.Execute
	es := d.s.Exec
	var consumed *ExecutePrepared
	if cfg := d.s.Config.ExecuteConfig(); cfg.Mode != ExecuteModeOpen {
		if r.TokenHash == "" {
			return d.rejectExecute(execError(CodeExecConfirmationRequired, MsgExecConfirmationRequired))
		}
		tok := es.Tokens[r.TokenHash]
		switch {
		case tok == nil:
			return d.rejectExecute(execError(CodeExecTokenInvalid, MsgExecTokenInvalid))
		case !d.now.Before(tok.ExpiresAt):
			return d.rejectExecute(execError(CodeExecTokenExpired, MsgExecTokenExpired))
		case tok.BusinessID != r.BusinessID || tok.RequestHash != r.RequestHash || tok.Consumer != x.consumer:
			return d.rejectExecute(execError(CodeExecTokenMismatch, MsgExecTokenMismatch))
		case cfg.Mode == ExecuteModeStrict && x.amount > cfg.MaxAmountCents:
			e := execError(CodeExecAmountExceeded, MsgExecAmountExceeded(cfg.MaxAmountCents))
			e.Details = map[string]any{"amount_cents": x.amount, "limit_cents": cfg.MaxAmountCents}
			return d.rejectExecute(e)
		}
		consumed = tok
	}
	id := TransactionIDFor(d.cmd.Request)
	if _, dup := es.Open[id]; dup {
		return d.rejectExecute(Errorf(CodeConflict, "transaction '%s' is already open", id))
	}
	if c := es.Consumers[x.consumer]; c != nil && c.Open >= MaxOpenTransactions {
		return d.rejectExecute(Errorf(CodeRateLimited, "consumer '%s' already has %d open transactions", x.consumer, MaxOpenTransactions))
	}
	tx := &Transaction{
		ID: id, Consumer: x.consumer, AgentID: x.agentID, BusinessID: x.business.ID, Categories: slices.Clone(x.business.Categories),
		AmountCents: x.amount, Currency: x.business.Currency, RequestHash: r.RequestHash, Status: TxExecuting, CreatedAt: d.now,
	}
	if len(tx.Categories) == 0 {
		tx.Categories = nil
	}
	d.ev.Error = d.enforcePolicies(tx, es.Consumers[x.consumer], x.business)
	d.ev.Type = EvExecuteDecided
	d.ev.Transaction = tx
	d.ev.Prepared = consumed
	return d.ev
}

// enforcePolicies decides tx against its consumer's policies (the Agent
// Policy Engine spec §3.2; policy.Evaluate: spending against the rolling
// ledger, categories, confirmation, time windows, with the documented
// precedence) and sets its status: pass (or notify) executing, block
// blocked (the returned error names the policy and the limit), confirm
// pending_approval (an approval of the existing queue, ID the
// transaction's), queue queued until the window opens. Every finding,
// shadow policies' included, and the notices for the consumer's webhooks
// are recorded in the transaction.
func (d *decider) enforcePolicies(tx *Transaction, ce *ConsumerExec, b *Business) *Error {
	in := policy.Input{Now: d.now, AgentID: tx.AgentID, BusinessID: tx.BusinessID, Categories: b.Categories,
		AmountCents: tx.AmountCents, FirstTime: true}
	var set *policy.Set
	var ledger *policy.Ledger
	if ce != nil {
		set, ledger = ce.Policies, ce.Ledger
		in.FirstTime = !ce.Pairs[pairKey(tx.AgentID, tx.BusinessID)]
	}
	out := policy.Evaluate(set, ledger, in)
	tx.Findings = out.Findings
	if len(out.Notices) > 0 {
		tx.Notices = make([]Notice, len(out.Notices))
		for i, n := range out.Notices {
			tx.Notices[i] = Notice{Kind: n.Kind, PolicyID: n.PolicyID, Message: n.Message}
		}
	}
	switch out.Verdict {
	case policy.Block:
		tx.Status, tx.PolicyID, tx.Limit = TxBlocked, out.PolicyID, out.Limit
		details := map[string]any{"policy_id": out.PolicyID, "transaction_id": tx.ID}
		if out.Limit != "" {
			details["limit"] = out.Limit
		}
		return &Error{Code: Code(out.Code), Message: out.Message, Details: details}
	case policy.Confirm:
		tx.Status, tx.PolicyID, tx.Limit, tx.ApprovalID = TxPendingApproval, out.PolicyID, out.Limit, tx.ID
		if !out.ReleaseAt.IsZero() {
			// Outside a queueing time window too: once approved, it
			// waits for the window (executeApproval).
			at := out.ReleaseAt.UTC()
			tx.ReleaseAt = &at
		}
	case policy.Queue:
		at := out.ReleaseAt.UTC()
		tx.Status, tx.PolicyID, tx.Limit, tx.ReleaseAt = TxQueued, out.PolicyID, out.Limit, &at
	}
	return nil
}

// pairKey is the key of an (agent, business) pair in ConsumerExec.Pairs.
func pairKey(agent, business string) string { return agent + "\x00" + business }

// onlyGate refuses a command a client sent that only the gate sends.
func (d *decider) onlyGate(what string) *Error {
	if d.cmd.Principal != "" || d.cmd.TokenHash != "" || d.cmd.Authenticated != nil {
		return Errorf(CodeForbidden, "only the gate %s", what)
	}
	return nil
}

// executeOutcome decides a CmdExecuteOutcome: the business's answer to an
// executing transaction, recorded once.
func (d *decider) executeOutcome() *Event {
	o := d.cmd.Outcome
	if o == nil {
		return d.reject(missing("outcome"))
	}
	if err := d.onlyGate("records a business's answer"); err != nil {
		return d.reject(err)
	}
	if o.TransactionID == "" {
		return d.reject(missing("outcome.transaction_id"))
	}
	var tx *Transaction
	if d.s.Exec != nil {
		tx = d.s.Exec.Open[o.TransactionID]
	}
	if tx == nil || tx.Status != TxExecuting {
		return d.reject(Errorf(CodeConflict, "transaction '%s' is not executing (unknown, not yet approved or released, or already answered)", o.TransactionID))
	}
	d.ev.AgentID = tx.AgentID
	switch {
	case o.HTTPStatus != 0 && (o.HTTPStatus < 100 || o.HTTPStatus > 599):
		return d.reject(fieldError(CodeInvalidRequest, "outcome.http_status", "must be an HTTP status (100-599)"))
	case o.Error == "" && o.Status == "":
		return d.reject(missing("outcome.status"))
	case len(o.Status) > MaxBusinessStatusChars || !printable(o.Status):
		return d.reject(fieldError(CodeInvalidRequest, "outcome.status", "must be at most %d printable characters", MaxBusinessStatusChars))
	case len(o.Error) > MaxOutcomeTextChars || !printable(o.Error):
		return d.reject(fieldError(CodeInvalidRequest, "outcome.error", "must be at most %d printable characters", MaxOutcomeTextChars))
	case len(o.ConfirmationToken) > MaxOutcomeTextChars || !printable(o.ConfirmationToken):
		return d.reject(fieldError(CodeInvalidRequest, "outcome.confirmation_token", "must be at most %d printable characters", MaxOutcomeTextChars))
	case len(o.Data) > MaxExecuteRequestBytes:
		return d.reject(fieldError(CodeTooLong, "outcome.data", "outcome.data is larger than %d bytes", MaxExecuteRequestBytes))
	case len(o.Data) > 0 && !json.Valid(o.Data):
		return d.reject(fieldError(CodeInvalidRequest, "outcome.data", "must be JSON"))
	}
	done := eventTransaction(tx)
	done.ReleaseAt = nil // the state's time of a released one's reservation
	done.BusinessStatus, done.Data, done.ConfirmationToken = o.Status, slices.Clone(o.Data), o.ConfirmationToken
	switch {
	case o.Error != "":
		done.Status = TxFailed
		details := map[string]any{"transaction_id": tx.ID, "business_id": tx.BusinessID}
		if o.HTTPStatus != 0 {
			details["http_status"] = o.HTTPStatus
		}
		d.ev.Error = &Error{Code: CodeExecBusinessFailed, Message: "Business call failed: " + o.Error, Details: details}
	case o.Status == TxPendingConfirmation:
		done.Status = TxPendingConfirmation
	default:
		done.Status = TxCompleted
	}
	d.ev.Type = EvExecuteCompleted
	d.ev.Transaction = done
	return d.ev
}

// executeTick decides a CmdExecuteTick: the confirmation tokens whose time
// is up expire; the queued transactions whose window opened are released
// (executing), or expire when their business left the registry. Each list
// is in ID order and holds at most MaxTimersPerTick entries. Nothing due:
// no event.
func (d *decider) executeTick() *Event {
	if err := d.onlyGate("ticks"); err != nil {
		return d.reject(err)
	}
	es := d.s.Exec
	if es == nil {
		return nil
	}
	var t ExecuteTimers
	kept := time.Duration(d.s.Config.ExecuteConfig().ExpiredTokenKept)
	for h, tok := range es.Tokens {
		if !d.now.Before(tok.ExpiresAt.Add(kept)) {
			t.TokensExpired = append(t.TokensExpired, h)
		}
	}
	for id, tx := range es.Open {
		if tx.Status != TxQueued || tx.ReleaseAt == nil || d.now.Before(*tx.ReleaseAt) {
			continue
		}
		if !tx.SameBusiness(es.Businesses[tx.BusinessID]) {
			t.Expired = append(t.Expired, id)
		} else {
			t.Released = append(t.Released, id)
		}
	}
	if t.TokensExpired == nil && t.Released == nil && t.Expired == nil {
		return nil
	}
	for _, l := range []*[]string{&t.TokensExpired, &t.Released, &t.Expired} {
		sort.Strings(*l)
		if len(*l) > MaxTimersPerTick {
			*l = (*l)[:MaxTimersPerTick]
		}
	}
	d.ev.Type = EvExecuteTimers
	d.ev.Timers = &t
	return d.ev
}

// executeApprovable refuses to approve an execute approval whose
// transaction's business has left the registry (QWED-EXEC-007): approved,
// it would be executing with no business to call. The consumer may still
// deny it, or let it expire.
func (d *decider) executeApprovable(ap *Approval) *Error {
	if ap.TransactionID == "" || d.s.Exec == nil {
		return nil
	}
	tx := d.s.Exec.Open[ap.TransactionID]
	if tx == nil || tx.Status != TxPendingApproval || tx.SameBusiness(d.s.Exec.Businesses[tx.BusinessID]) {
		return nil
	}
	return unknownBusiness(tx.BusinessID)
}

// executeApproval returns the transaction an execute approval's
// resolution moves (approved: executing; denied or expired: denied or
// expired), or nil when the approval holds none open here.
func (d *decider) executeApproval(ap *Approval, status ApprovalStatus) *Transaction {
	if ap.TransactionID == "" || d.s.Exec == nil {
		return nil
	}
	tx := d.s.Exec.Open[ap.TransactionID]
	if tx == nil || tx.Status != TxPendingApproval {
		return nil
	}
	out := eventTransaction(tx)
	switch status {
	case ApprovalApproved:
		out.Status = TxExecuting
		if tx.ReleaseAt != nil && d.now.Before(*tx.ReleaseAt) {
			out.Status = TxQueued // its time window is not open yet: released by the tick
		}
	case ApprovalExpired:
		out.Status = TxExpired
	default:
		out.Status = TxDenied
	}
	return out
}

// eventTransaction is the copy of the state's open transaction tx an
// event carries: without the notices of its decision, nor the state's
// DecidedSeq.
func eventTransaction(tx *Transaction) *Transaction {
	c := cloneTransaction(tx)
	c.Notices, c.DecidedSeq, c.BusinessOwner = nil, 0, ""
	return c
}

// cloneTransaction returns a deep copy of tx.
func cloneTransaction(tx *Transaction) *Transaction {
	c := *tx
	c.Categories = slices.Clone(tx.Categories)
	c.Findings = slices.Clone(tx.Findings)
	c.Notices = slices.Clone(tx.Notices)
	c.Data = slices.Clone(tx.Data)
	if tx.ReleaseAt != nil {
		t := *tx.ReleaseAt
		c.ReleaseAt = &t
	}
	return &c
}
