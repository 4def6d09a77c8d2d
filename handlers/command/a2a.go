package command

import (
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
)

// Agent-to-agent interception (QWED A2A, issue 13): the AgentMessage and
// the trust boundary commands, for every transport. An AgentMessage is
// the same JSON as the HTTP body of POST /a2a/intercept and the data of a
// qwed.a2a.message CloudEvent; a boundary change the data of a
// qwed.a2a.boundary CloudEvent, or an HTTP route with the agent in the
// path (A2ATrust ... A2AUnblockPair).

// A2AMessage is POST /a2a/intercept and the qwed.a2a.message CloudEvent.
// The body is decoded strictly (a2a.DecodeDigest, which also gives the
// payload digest the command records) with Input.MaxPayload as the
// payload bound (0: a2a.DefaultMaxPayloadBytes; the transport passes the
// gate's max_payload_size_bytes). It takes a principal API key (the
// message is checked against that principal's boundary; the admin key's
// against the gate-wide one) or an agent token, which sends only its own
// agent's messages: the command's agent is then the sender (Decide
// refuses a token that is not the sender's with QWED-AUTH-003). A
// CloudEvent subject, when set, must be the sender.
var A2AMessage = &Endpoint{auth: AuthAgent, body: "a2a-message", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	max := in.MaxPayload
	if max <= 0 {
		max = a2a.DefaultMaxPayloadBytes
	}
	m, digest, p := a2a.DecodeDigest(in.Body, max)
	if p != nil {
		return nil, nil, &Rejection{Status: problemStatus(p), Err: domain.Error{Code: domain.Code(p.Code), Message: p.Message, Details: p.Details()}}
	}
	if in.AgentID != "" && in.AgentID != m.SenderAgentID {
		return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "sender_agent_id"},
			"sender_agent_id %q is not the agent %q of the request", Clip(m.SenderAgentID), Clip(in.AgentID))
	}
	// The digest is computed here, on the caller's goroutine, from the
	// canonical form stage 0 builds anyway; Decide, on the partition's
	// single writer, checks its shape and does not canonicalize again.
	cmd := &domain.Command{Type: domain.CmdA2AMessage, A2A: m, A2ADigest: digest}
	if cr.Principal == "" {
		cmd.AgentID = m.SenderAgentID
	}
	return cmd, nil, nil
}}

// problemStatus is the HTTP status of a stage-0 problem: 413 for a
// payload over max_payload_size_bytes (QWED A2A's bound on what is
// received), the catalogue's otherwise.
func problemStatus(p *a2a.Problem) int {
	if p.Code == string(domain.CodeTooLong) && p.Field == "payload" {
		return 413
	}
	if p.Code == string(domain.CodeTooLong) {
		return 400
	}
	return domain.Code(p.Code).HTTPStatus()
}

// a2aBoundaryBody is the data of a qwed.a2a.boundary CloudEvent.
type a2aBoundaryBody = domain.A2ABoundaryChange

// a2aPairBody is the body of POST and DELETE /a2a/boundary/block-pair.
type a2aPairBody struct {
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
}

// boundaryCredentials refuses a boundary change without a principal API
// key: an agent token changes no boundary (QWED-AUTH-003), no key at all
// is QWED-AUTH-001.
func boundaryCredentials(cr *Credentials) *Rejection {
	switch {
	case cr.Principal != "":
		return nil
	case cr.TokenHash != "":
		return Reject(domain.CodeForbidden, nil, "an agent token cannot change a trust boundary: use a principal API key")
	}
	return Reject(domain.CodeMissingAPIKey, map[string]any{"header": HTTP.KeyHeader}, "missing API key: a trust boundary is changed with a principal API key")
}

// A2ABoundary is the qwed.a2a.boundary CloudEvent: {"op", "agent",
// "sender", "receiver"} (domain.A2ABoundaryChange) changes the boundary of
// the key's principal (the admin key: the gate-wide boundary).
var A2ABoundary = &Endpoint{auth: AuthAgent, body: "a2a-boundary", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	if r := boundaryCredentials(cr); r != nil {
		return nil, nil, r
	}
	var b a2aBoundaryBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdA2ABoundary, A2ABoundary: &b}, nil, nil
}}

// a2aAgentOp is the endpoint of an HTTP route that changes one agent of
// the boundary: the agent is Input.AgentID (the path's), the body empty.
func a2aAgentOp(op string) *Endpoint {
	return &Endpoint{auth: AuthAgent, body: "empty", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
		if r := boundaryCredentials(cr); r != nil {
			return nil, nil, r
		}
		var b struct{}
		if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
			return nil, nil, e
		}
		return &domain.Command{Type: domain.CmdA2ABoundary, A2ABoundary: &domain.A2ABoundaryChange{Op: op, Agent: in.AgentID}}, nil, nil
	}}
}

// a2aPairOp is the endpoint of an HTTP route that changes a blocked
// pair: the body names it ({"sender", "receiver"}).
func a2aPairOp(op string) *Endpoint {
	return &Endpoint{auth: AuthAgent, body: "a2a-pair", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
		if r := boundaryCredentials(cr); r != nil {
			return nil, nil, r
		}
		var b a2aPairBody
		if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
			return nil, nil, e
		}
		return &domain.Command{Type: domain.CmdA2ABoundary, A2ABoundary: &domain.A2ABoundaryChange{Op: op, Sender: b.Sender, Receiver: b.Receiver}}, nil, nil
	}}
}

// The HTTP routes of the trust boundary (Input.AgentID is the path's
// agent; the pair routes take {"sender", "receiver"}).
var (
	// A2ATrust is POST /a2a/boundary/trust/{agent}.
	A2ATrust = a2aAgentOp(domain.A2AOpTrust)
	// A2AUntrust is DELETE /a2a/boundary/trust/{agent}.
	A2AUntrust = a2aAgentOp(domain.A2AOpUntrust)
	// A2ABlock is POST /a2a/boundary/block/{agent}.
	A2ABlock = a2aAgentOp(domain.A2AOpBlock)
	// A2AUnblock is DELETE /a2a/boundary/block/{agent}.
	A2AUnblock = a2aAgentOp(domain.A2AOpUnblock)
	// A2ABlockPair is POST /a2a/boundary/block-pair.
	A2ABlockPair = a2aPairOp(domain.A2AOpBlockPair)
	// A2AUnblockPair is DELETE /a2a/boundary/block-pair.
	A2AUnblockPair = a2aPairOp(domain.A2AOpUnblockPair)
)

// A2AReply renders the answer to an A2A command from its event: for a
// verdict, the status (200, or 429 for rate_limited), the body of
// domain.A2AReply and the Retry-After header value in whole seconds
// rounded up ("" when none); for a boundary change, 200 and its
// domain.A2ABoundaryReply; for a refusal, its error's status and body.
// It is domain.Reply with the header, for the transports that answer an
// A2A command without a Built (the Kafka reply, the proxy).
func A2AReply(ev *domain.Event) (status int, body []byte, retryAfter string, err error) {
	status, body, err = render(ev, nil)
	return status, body, A2ARetryAfter(ev), err
}

// A2ARetryAfter returns the Retry-After value of a rate-limited verdict:
// its retry_after_ms in whole seconds, rounded up, at least 1; "" for any
// other event.
func A2ARetryAfter(ev *domain.Event) string {
	if ev == nil || ev.A2AVerdict == nil || ev.A2AVerdict.Status != a2a.StatusRateLimited {
		return ""
	}
	s := max((ev.A2AVerdict.RetryAfterMs+999)/1000, 1)
	return strconv.FormatInt(s, 10)
}
