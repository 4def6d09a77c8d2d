package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"

	"github.com/agentgate/agentgate/domain"
)

// This file exports the CloudEvent -> Command mapping of POST /events for
// the other transports (the Kafka gate): the same endpoints, the same
// strict decoding, the same replies.

// Rejection is a request refused before it became a command, with the
// status the HTTP API answers it with and the catalogue error.
type Rejection struct {
	Status int
	Err    domain.Error
}

// Error implements the error interface with the code and message.
func (r *Rejection) Error() string { return string(r.Err.Code) + ": " + r.Err.Message }

// Body returns the error body {"error": {"code","message","details"}}.
func (r *Rejection) Body() []byte {
	return (&apiError{status: r.Status, err: r.Err}).body()
}

// NewRejection returns a rejection with the code's catalogue status.
func NewRejection(code domain.Code, details map[string]any, format string, args ...any) *Rejection {
	e := reject(code, details, format, args...)
	return &Rejection{Status: e.status, Err: e.err}
}

func rejectionOf(e *apiError) *Rejection { return &Rejection{Status: e.status, Err: e.err} }

// EventTypes returns, sorted, the CloudEvent types that are commands of
// the gate (DESIGN.md §3).
func EventTypes() []string {
	out := make([]string, 0, len(eventEndpoints))
	for t := range eventEndpoints {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// EventNeedsAPIKey reports whether the CloudEvent type is a command
// (known) and whether it is a principal command that needs an API key
// (principal); the other commands take the agent token from their data.
func EventNeedsAPIKey(typ string) (known, principal bool) {
	ep, ok := eventEndpoints[typ]
	if !ok {
		return false, false
	}
	return true, ep.auth == authPrincipal
}

// EventCommand is a command built from a CloudEvent, with the secret the
// gate minted for it (an agent token), if any.
type EventCommand struct {
	// Command is ready to submit: Request, Principal and TokenHash are set.
	Command *domain.Command
	secret  *minted
}

// BuildEventCommand builds the command of a CloudEvent as POST /events
// does: typ selects the endpoint, data is its JSON body, subject the
// agent. principal is the principal already authenticated from an API
// key (AdminPrincipal for the admin key, "" for none); tokenHash the
// SHA-256 hex of an agent token presented outside the data ("" for none).
// A principal command without a principal is refused (QWED-AUTH-001), an
// unknown type is QWED-REQ-005, a malformed body QWED-REQ-001 naming the
// member.
func BuildEventCommand(typ, subject string, data []byte, id domain.RequestID, principal, tokenHash string) (*EventCommand, *Rejection) {
	ep, ok := eventEndpoints[typ]
	if !ok {
		return nil, rejectionOf(reject(domain.CodeUnsupportedType, map[string]any{"attribute": "type"},
			"CloudEvent type %q is not a command of the gate", clip(typ)))
	}
	if ep.auth == authPrincipal && principal == "" {
		return nil, rejectionOf(reject(domain.CodeMissingAPIKey, map[string]any{"header": "x-api-key"},
			"missing API key: send it in the x-api-key header"))
	}
	cr := creds{principal: principal, tokenHash: tokenHash}
	in := input{body: data, agentID: subject}
	cmd, mint, e := ep.command(&in, &cr)
	if e != nil {
		return nil, rejectionOf(e)
	}
	if ep.auth == authAgent && cr.principal == "" && cr.tokenHash == "" {
		return nil, rejectionOf(reject(domain.CodeInvalidAgentToken, nil,
			"missing agent token: send agent_token in the data or an API key"))
	}
	cmd.Request = id
	cmd.Request.Scope = domain.RequestScope(cr.principal, cr.tokenHash)
	cmd.Principal = cr.principal
	cmd.TokenHash = cr.tokenHash
	return &EventCommand{Command: cmd, secret: mint}, nil
}

// Reply renders the answer to the command from its recorded event: the
// status and JSON body of the matching HTTP endpoint (a minted agent token
// included only when ev is the event this command produced). An event
// recorded for a different request with the same RequestID is refused
// (QWED-REQ-409) without disclosing it.
func (c *EventCommand) Reply(ev *domain.Event) (int, []byte, *Rejection) {
	if ev == nil {
		return 0, nil, &Rejection{Status: http.StatusInternalServerError,
			Err: domain.Error{Code: domain.CodeInternal, Message: "the gate recorded no decision for the request"}}
	}
	if !sameRequest(c.Command, ev.Command) {
		return 0, nil, rejectionOf(reject(domain.CodeConflict, map[string]any{"request_id": c.Command.Request.ID},
			"the request id %q was already used by a different request", clip(c.Command.Request.ID)))
	}
	status, body, err := render(ev, c.secret)
	if err != nil {
		return 0, nil, &Rejection{Status: http.StatusInternalServerError,
			Err: domain.Error{Code: domain.CodeInternal, Message: "the decision was recorded but could not be rendered"}}
	}
	return status, body, nil
}

// RejectionCommand returns the audit record of a refused request (the
// CmdRejectRequest command the HTTP API records): the catalogue
// description of the code, the details, the endpoint, and the size and
// SHA-256 of the body, never the body.
func RejectionCommand(r *Rejection, endpoint string, body []byte, principal string, id domain.RequestID) *domain.Command {
	rec := domain.Error{Code: r.Err.Code, Message: describe(r.Err.Code), Details: r.Err.Details}
	if len(endpoint) > maxEndpointBytes {
		endpoint = endpoint[:maxEndpointBytes]
	}
	rej := &domain.RejectRequest{Error: rec, Endpoint: endpoint, BodyBytes: int64(len(body))}
	if len(body) > 0 {
		d := sha256.Sum256(body)
		rej.BodyDigest = hex.EncodeToString(d[:])
	}
	return &domain.Command{Type: domain.CmdRejectRequest, Request: id, Principal: principal, Reject: rej}
}
