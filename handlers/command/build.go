package command

import (
	"net/http"

	"github.com/agentgate/agentgate/domain"
)

// Transport is how a transport names the places credentials travel in,
// as its refusals quote them.
type Transport struct {
	// KeyHeader is the header of the API key, named in the details of a
	// refusal for a missing key.
	KeyHeader string
	// TokenHelp ends the message refusing an agent command that presented
	// no credentials ("missing agent token: " + TokenHelp).
	TokenHelp string
}

// The transports of the gate.
var (
	// HTTP is the HTTP API, its endpoints and POST /events.
	HTTP = Transport{KeyHeader: "X-API-Key",
		TokenHelp: "send agent_token in the body, an Authorization: Bearer header, or an X-API-Key"}
	// Kafka is the requests topic of the Kafka gate.
	Kafka = Transport{KeyHeader: "x-api-key", TokenHelp: "send agent_token in the data, an authorization: Bearer header, or an API key"}
)

// MissingKey is the refusal of a principal command without an API key
// (QWED-AUTH-001, naming the transport's header).
func (t Transport) MissingKey() *Rejection {
	return Reject(domain.CodeMissingAPIKey, map[string]any{"header": t.KeyHeader},
		"missing API key: send it in the %s header", t.KeyHeader)
}

// Built is a command built from a request, with the secret the gate
// minted for it (an agent token, an API key), if any.
type Built struct {
	// Command is ready to submit: Request, Principal and TokenHash are set.
	Command *domain.Command
	secret  *minted
}

// Build builds the command of ep from in for a request id whose
// credentials cr the transport has authenticated (an agent token found in
// the body is hashed into cr). A principal command without a principal is
// refused (MissingKey), a malformed body is QWED-REQ-001 naming the
// member, a field over its bound QWED-REQ-004 (400) naming it (as the
// QWED protocol answers a query over its limit; the catalogue's 413 is
// for a body over the transport's byte limit), a body its schema refuses
// QWED-REQ-001 naming the member (checkBody), and an agent command with
// no credentials at all QWED-AGENT-002. Every transport builds its
// commands here, so HTTP, POST /events and Kafka refuse the same bodies.
// The request id is scoped by the credentials (domain.RequestScope).
func (t Transport) Build(ep *Endpoint, in *Input, cr *Credentials, id domain.RequestID) (Built, *Rejection) {
	if ep.auth == AuthPrincipal && cr.Principal == "" {
		return Built{}, t.MissingKey()
	}
	cmd, mint, r := ep.build(in, cr)
	if r != nil {
		return Built{}, r
	}
	if err := domain.CheckBounds(cmd); err != nil {
		return Built{}, &Rejection{Status: http.StatusBadRequest, Err: *err}
	}
	if r := checkBody(ep.body, in.Body); r != nil {
		return Built{}, r
	}
	if ep.auth == AuthAgent && cr.Principal == "" && cr.TokenHash == "" {
		return Built{}, Reject(domain.CodeInvalidAgentToken, nil, "missing agent token: %s", t.TokenHelp)
	}
	cmd.Request = id
	cmd.Request.Scope = domain.RequestScope(cr.Principal, cr.TokenHash)
	cmd.Principal = cr.Principal
	cmd.TokenHash = cr.TokenHash
	return Built{Command: cmd, secret: mint}, nil
}

// Same reports whether the recorded event ev is this request's: the same
// command type, credentials, target and payload (minted secrets and the
// engine's verdict aside). An event recorded for another request with the
// same RequestID must not be disclosed.
func (b *Built) Same(ev *domain.Event) bool { return sameRequest(b.Command, ev.Command) }

// Render renders the answer to the command from its recorded event: the
// status and JSON body of the matching HTTP endpoint (domain.Reply), a
// minted secret included only when ev is the event that recorded it.
func (b *Built) Render(ev *domain.Event) (int, []byte, error) { return render(ev, b.secret) }

// Reply is Same and Render with the refusals of the transports that
// quote no request of their own: an event recorded for a different
// request with the same RequestID is refused (QWED-REQ-409) without
// disclosing it; no event or one that cannot be rendered is QWED-SYS-001.
func (b *Built) Reply(ev *domain.Event) (int, []byte, *Rejection) {
	if ev == nil {
		return 0, nil, &Rejection{Status: http.StatusInternalServerError,
			Err: domain.Error{Code: domain.CodeInternal, Message: "the gate recorded no decision for the request"}}
	}
	if !b.Same(ev) {
		return 0, nil, Reject(domain.CodeConflict, map[string]any{"request_id": b.Command.Request.ID},
			"the request id %q was already used by a different request", Clip(b.Command.Request.ID))
	}
	status, body, err := b.Render(ev)
	if err != nil {
		return 0, nil, &Rejection{Status: http.StatusInternalServerError,
			Err: domain.Error{Code: domain.CodeInternal, Message: "the decision was recorded but could not be rendered"}}
	}
	return status, body, nil
}
