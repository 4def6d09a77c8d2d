package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/streams/cehttp"
)

// eventEndpoints maps the CloudEvent types of DESIGN.md §3 accepted on
// POST /events to the endpoint whose JSON body is their data.
var eventEndpoints = map[string]*endpoint{
	string(domain.CmdRegisterAgent):   &epRegister,
	string(domain.CmdVerifyAction):    &epVerify,
	string(domain.CmdVerifyToolCall):  &epTool,
	string(domain.CmdLogExecution):    &epExecution,
	string(domain.CmdRequestTrust):    &epTrust,
	string(domain.CmdResolveApproval): &epResolveEvent,
	// Credentials (issue 11): an agent rotates its own token; its
	// principal revokes it. API keys are principal-wide state, changed
	// through the HTTP API only (every partition must record the change).
	string(domain.CmdRotateAgentToken): &epRotateToken,
	string(domain.CmdRevokeAgentToken): &epRevokeToken,
}

// HTTPSource is the CloudEvent source of the HTTP API's own commands
// (their RequestID's source). The namespace ("http" and "http/…") is the
// API's: a CloudEvent that names it is refused (EventSourceRejection), so
// that it cannot pass for an HTTP request. URI sources such as
// "http://host/path" are outside it.
const HTTPSource = "http"

// EventSourceRejection refuses a CloudEvent source in the HTTP API's
// namespace with QWED-REQ-001 naming the attribute; nil for any other.
func EventSourceRejection(source string) *Rejection {
	if e := sourceRefusal(source); e != nil {
		return rejectionOf(e)
	}
	return nil
}

func sourceRefusal(source string) *apiError {
	if source != HTTPSource && !strings.HasPrefix(source, HTTPSource+"/") {
		return nil
	}
	return reject(domain.CodeInvalidRequest, map[string]any{"attribute": "source"},
		"CloudEvent source %q is in the namespace of the HTTP API's own requests (%q)", clip(source), HTTPSource)
}

// events serves POST /events: one command as a CloudEvent (binary or
// structured mode). The event's source and id are the RequestID (a
// redelivered event gets the recorded decision), its subject the agent,
// its data the body of the matching endpoint. The answer is a CloudEvent
// of type <type>.reply in the request's mode whose data is the endpoint's
// body, with the endpoint's status. A request that is not a valid
// CloudEvent is answered with a plain JSON error body.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	c := newCall(r)
	buf := a.getBuf()
	defer a.putBuf(buf)
	e := readBody(w, r, a.cfg.MaxBodyBytes, buf)
	c.body = buf.Bytes()
	if e != nil {
		a.fail(ctx, w, c, e)
		return
	}
	req := r.WithContext(ctx)
	req.Body = io.NopCloser(bytes.NewReader(c.body))
	req.ContentLength = int64(len(c.body))
	ce, err := cehttp.Decode(req)
	if err != nil {
		a.fail(ctx, w, c, cloudEventError(err))
		return
	}
	status, body := a.event(w, r, c, ce)
	reply := cehttp.NewReply(ce, body, a.cfg.Clock().UTC())
	if err := cehttp.Write(w, status, reply); err != nil {
		a.log.Error("writing the reply cloudevent", "type", reply.Type, "err", err)
	}
}

// event decides one decoded CloudEvent and returns the reply's status and
// data.
func (a *api) event(w http.ResponseWriter, r *http.Request, c *call, ce cehttp.Event) (int, []byte) {
	ctx := r.Context()
	if e := sourceRefusal(ce.Source); e != nil {
		a.record(ctx, c, e)
		if ce.Type == string(domain.CmdQWEDVerify) {
			return e.status, verify.ErrorAnswer(e.err.Code, e.err.Details, "%s", e.err.Message).Body
		}
		return e.status, e.body()
	}
	if ce.Type == string(domain.CmdQWEDVerify) {
		return a.verifyEvent(w, r, c, ce)
	}
	ep, ok := eventEndpoints[ce.Type]
	if !ok {
		e := reject(domain.CodeUnsupportedType, map[string]any{"attribute": "type"},
			"CloudEvent type %q is not a command of the gate", clip(ce.Type))
		a.record(ctx, c, e)
		return e.status, e.body()
	}
	var e *apiError
	if c.creds, e = a.credentials(r, ep.auth == authPrincipal, ep.auth == authAgent); e != nil {
		a.record(ctx, c, e)
		return e.status, e.body()
	}
	in := input{body: ce.Data, agentID: ce.Subject}
	status, body, e := a.run(ctx, ep, &in, c, domain.RequestID{Source: ce.Source, ID: ce.ID})
	if e != nil {
		if e.record {
			a.record(ctx, c, e)
		}
		return e.status, e.body()
	}
	return status, body
}

// cloudEventError maps a cehttp decoding error to a rejection.
func cloudEventError(err error) *apiError {
	var ce *cehttp.Error
	details := map[string]any{}
	msg := err.Error()
	if errors.As(err, &ce) {
		if ce.Attribute != "" {
			details["attribute"] = ce.Attribute
		}
		msg = ce.Reason
	}
	if errors.Is(err, cehttp.ErrTooLarge) {
		return reject(domain.CodeTooLong, details, "CloudEvent too large: %s", clip(msg))
	}
	return reject(domain.CodeInvalidRequest, details, "invalid CloudEvent: %s", clip(msg))
}
