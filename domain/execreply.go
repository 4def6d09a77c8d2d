package domain

import (
	"encoding/json"
	"time"
)

// PrepareReply is the reply to POST /agp/execute/prepare (the Agent Policy
// Engine spec §2.2) without confirmationToken, which the transport that
// minted it adds.
type PrepareReply struct {
	ExpiresAt time.Time `json:"expiresAt"`
	Summary   string    `json:"summary"`
}

// ExecuteReply is the reply to POST /agp/execute (the Agent Policy Engine
// spec §2.2): the transaction's ID and status (the business's own status
// once it answered), the business's data, and what the status needs: the
// approval of a pending_approval execute, the release time of a queued
// one, the business's confirmation token of a pending_confirmation one
// (§2.6).
type ExecuteReply struct {
	TransactionID     string          `json:"transactionId"`
	Status            string          `json:"status"`
	Data              json.RawMessage `json:"data,omitempty"`
	ApprovalID        string          `json:"approvalId,omitempty"`
	ReleaseAt         *time.Time      `json:"releaseAt,omitempty"`
	ConfirmationToken string          `json:"confirmationToken,omitempty"`
}

// BusinessDeletedReply answers the deletion of a business.
type BusinessDeletedReply struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// ExecuteReplyOf returns the reply body of an execute.decided or
// execute.completed event's transaction.
func ExecuteReplyOf(tx *Transaction) ExecuteReply {
	r := ExecuteReply{TransactionID: tx.ID, Status: tx.Status, ApprovalID: tx.ApprovalID, ReleaseAt: tx.ReleaseAt}
	switch tx.Status {
	case TxCompleted, TxPendingConfirmation:
		if tx.BusinessStatus != "" {
			r.Status = tx.BusinessStatus
		}
		r.Data, r.ConfirmationToken = tx.Data, tx.ConfirmationToken
	}
	return r
}

// execReply renders the reply of an event of the consumer policy engine.
func execReply(ev *Event) (int, any, bool) {
	switch ev.Type {
	case EvBusinessChanged:
		b := ev.Business
		if b == nil || ev.Command == nil || ev.Command.Business == nil {
			return 0, nil, false
		}
		switch ev.Command.Business.Op {
		case OpDelete:
			return 200, BusinessDeletedReply{ID: b.ID, Deleted: true}, true
		case OpCreate:
			return 201, b, true
		}
		return 200, b, true
	case EvExecutePrepared:
		if p := ev.Prepared; p != nil {
			return 200, PrepareReply{ExpiresAt: p.ExpiresAt, Summary: p.Summary}, true
		}
	case EvExecuteDecided, EvExecuteCompleted:
		tx := ev.Transaction
		if tx == nil {
			return 0, nil, false
		}
		if ev.Error != nil {
			return ev.Error.Code.HTTPStatus(), ErrorReply{Error: (*ReplyError)(ev.Error)}, true
		}
		status := 202
		if ev.Type == EvExecuteCompleted {
			status = 200
		}
		return status, ExecuteReplyOf(tx), true
	case EvExecuteTimers:
		if ev.Timers != nil {
			return 200, ev.Timers, true
		}
	}
	return 0, nil, false
}
