package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/verify"
	"github.com/agentgate/agentgate/streams/cehttp"
)

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
	deadline := time.Now().Add(a.cfg.RequestTimeout)
	if r := command.SourceRejection(ce.Source); r != nil {
		e := rejected(r)
		a.record(ctx, c, e)
		if ce.Type == string(domain.CmdQWEDVerify) {
			return e.status, verify.ErrorAnswer(e.err.Code, e.err.Details, "%s", e.err.Message).Body
		}
		return e.status, e.body()
	}
	if ce.Type == string(domain.CmdQWEDVerify) {
		return a.verifyEvent(w, r, c, ce)
	}
	ep, rej := command.ForEvent(ce.Type)
	if rej != nil {
		e := rejected(rej)
		a.record(ctx, c, e)
		return e.status, e.body()
	}
	var e *apiError
	if c.creds, e = a.credentials(r, ep.Auth() == command.AuthPrincipal, ep.Auth() == command.AuthAgent); e != nil {
		a.record(ctx, c, e)
		return e.status, e.body()
	}
	in := command.Input{Body: ce.Data, AgentID: ce.Subject, ExecuteMode: a.cfg.ExecuteMode}
	// The edge limits of the A2A and the consumer policy engine's
	// endpoints hold here too: the same commands on another path.
	var admit func(http.ResponseWriter, *call) *apiError
	switch domain.CommandType(ce.Type) {
	case domain.CmdA2AMessage, domain.CmdA2ABoundary:
		admit = a.a2aAdmit
	case domain.CmdPrepareExecute, domain.CmdExecute, domain.CmdBusiness, domain.CmdPolicy:
		admit = a.executeAdmit
	}
	if admit != nil {
		if e = admit(w, c); e != nil {
			return e.status, e.body()
		}
	}
	if ep == command.A2AMessage {
		in.MaxPayload = int(a.a2aMaxPayload())
	}
	ev, status, body, e := a.run(ctx, ep, &in, c, domain.RequestID{Source: ce.Source, ID: ce.ID})
	if e != nil {
		if e.record {
			a.record(ctx, c, e)
		}
		return e.status, e.body()
	}
	a2aRetryAfter(w, ev)
	if ep == command.Execute {
		// As POST /agp/execute: the business's outcome, once recorded.
		return a.awaitOutcome(ctx, deadline, ev, status, body)
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
		return reject(domain.CodeTooLong, details, "CloudEvent too large: %s", command.Clip(msg))
	}
	return reject(domain.CodeInvalidRequest, details, "invalid CloudEvent: %s", command.Clip(msg))
}
