package command

import (
	"bytes"
	"encoding/json"

	"github.com/agentgate/agentgate/domain"
)

// The consumer policy engine's endpoints (the Agent Policy Engine spec §2,
// §3.1): an agent's prepare and execute (POST /agp/execute/prepare, POST
// /agp/execute and the CloudEvents qwed.execute.prepare, qwed.execute)
// and the business registry (POST /businesses, PUT and DELETE
// /businesses/{id}).

// ConfirmationTokenPrefix begins every confirmation token the gate mints.
const ConfirmationTokenPrefix = "qwed_ct_"

// executeBody is the body of an execute or a prepare: the business, the
// request the business receives (a JSON object), and the agent fields of
// QWED-Agent spec v1.1 §4.1 that name and authenticate the agent.
type executeBody struct {
	BusinessID string          `json:"businessId"`
	Request    json.RawMessage `json:"request"`
	agentFields
}

// decodeExecute builds the ExecuteRequest of an execute or a prepare. The
// agent is the body's agent_id, else the input's (the CloudEvent subject,
// the X-Agent-ID header): an agent token alone does not name its agent.
// The request hash is computed here (domain.RequestHashOf, RFC 8785).
//
// In modes confirm and strict (in.ExecuteMode, the gate's configured
// mode), a body that does not decode is refused as §2.4 orders it: without
// a confirmation token QWED-EXEC-001, with one QWED-EXEC-006 ("Unable to
// validate confirmation token for execute payload."), each 403, with the
// decoding problem in details.cause.
func decodeExecute(in *Input, cr *Credentials, typ domain.CommandType) (*domain.Command, *Rejection) {
	b, r := parseExecute(in)
	if r != nil && typ == domain.CmdExecute && (in.ExecuteMode == domain.ExecuteModeConfirm || in.ExecuteMode == domain.ExecuteModeStrict) {
		details := map[string]any{"cause": r.Err.Message}
		if f, ok := r.Err.Details["field"]; ok {
			details["field"] = f
		}
		if in.ConfirmationToken == "" {
			return nil, Reject(domain.CodeExecConfirmationRequired, details, "%s", domain.MsgExecConfirmationRequired)
		}
		return nil, Reject(domain.CodeExecUnparseable, details, "%s", domain.MsgExecUnparseable)
	}
	if r != nil {
		return nil, r
	}
	if e := b.apply(in, cr); e != nil {
		return nil, e
	}
	if in.AgentID == "" {
		return nil, Reject(domain.CodeMissingField, map[string]any{"field": "agent_id"},
			"missing required member agent_id: name the agent in the body's agent_id (or the X-Agent-ID header)")
	}
	h, err := domain.RequestHashOf(b.Request)
	if err != nil {
		return nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "request"},
			"request has no RFC 8785 canonical form: %s", Clip(err.Error()))
	}
	x := &domain.ExecuteRequest{BusinessID: b.BusinessID, Request: b.Request, RequestHash: h}
	if typ == domain.CmdExecute && in.ConfirmationToken != "" {
		x.TokenHash = HashSecret(in.ConfirmationToken)
	}
	return &domain.Command{Type: typ, AgentID: in.AgentID, Execute: x}, nil
}

// parseExecute decodes an execute's or a prepare's body: the payload the
// confirmation token is validated against.
func parseExecute(in *Input) (executeBody, *Rejection) {
	var b executeBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return b, e
	}
	switch {
	case b.BusinessID == "":
		return b, missing("businessId")
	case b.Request == nil || bytes.Equal(b.Request, []byte("null")):
		return b, missing("request")
	case b.Request[0] != '{':
		return b, Reject(domain.CodeInvalidRequest, map[string]any{"field": "request"}, "request must be a JSON object")
	case len(b.Request) > domain.MaxExecuteRequestBytes:
		return b, Reject(domain.CodeTooLong, map[string]any{"field": "request", "limit": domain.MaxExecuteRequestBytes},
			"request is larger than %d bytes", domain.MaxExecuteRequestBytes)
	}
	return b, nil
}

// PrepareExecute is POST /agp/execute/prepare and qwed.execute.prepare:
// it mints the confirmation token (answered once as confirmationToken,
// recorded as its hash).
var PrepareExecute = &Endpoint{auth: AuthAgent, body: "execute", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	cmd, r := decodeExecute(in, cr, domain.CmdPrepareExecute)
	if r != nil {
		return nil, nil, r
	}
	tok := mint("confirmationToken", ConfirmationTokenPrefix)
	cmd.Execute.TokenHash = tok.hash
	return cmd, tok, nil
}}

// Execute is POST /agp/execute and qwed.execute; the confirmation token
// (the X-Confirmation-Token header, Input.ConfirmationToken) enters the
// command as its hash.
var Execute = &Endpoint{auth: AuthAgent, body: "execute", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	cmd, r := decodeExecute(in, cr, domain.CmdExecute)
	return cmd, nil, r
}}

// businessBody is the body of POST /businesses and PUT /businesses/{id}:
// a business without its owner (the gate records the creator).
type businessBody struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Categories []string `json:"categories"`
	Endpoint   string   `json:"endpoint"`
	Currency   string   `json:"currency"`
}

func decodeBusiness(in *Input, op string) (*domain.Command, *Rejection) {
	var b businessBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, e
	}
	switch {
	case in.BusinessID != "" && b.ID != "" && b.ID != in.BusinessID:
		return nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "id"}, "id in the body does not match the business of the path")
	case in.BusinessID != "":
		b.ID = in.BusinessID
	}
	return &domain.Command{Type: domain.CmdBusiness, Business: &domain.BusinessChange{Op: op, Business: domain.Business{
		ID: b.ID, Name: b.Name, Categories: b.Categories, Endpoint: b.Endpoint, Currency: b.Currency,
	}}}, nil
}

// CreateBusiness is POST /businesses (the admin key or a principal's,
// which owns the business).
var CreateBusiness = &Endpoint{auth: AuthPrincipal, body: "business", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	cmd, r := decodeBusiness(in, domain.OpCreate)
	return cmd, nil, r
}}

// UpdateBusiness is PUT /businesses/{id} (the owner or the admin).
var UpdateBusiness = &Endpoint{auth: AuthPrincipal, body: "business", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	cmd, r := decodeBusiness(in, domain.OpUpdate)
	return cmd, nil, r
}}

// DeleteBusiness is DELETE /businesses/{id} (the owner or the admin).
var DeleteBusiness = &Endpoint{auth: AuthPrincipal, body: "empty", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b struct{}
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdBusiness, Business: &domain.BusinessChange{Op: domain.OpDelete,
		Business: domain.Business{ID: in.BusinessID}}}, nil, nil
}}
