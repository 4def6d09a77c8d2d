package httpapi

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// pathIDs extract the path identifiers of a route.
type pathIDs func(r *http.Request) (command.Input, *apiError)

func pathValue(r *http.Request, name string) (string, *apiError) {
	v := r.PathValue(name)
	if len(v) > MaxPathIDBytes {
		return "", reject(domain.CodeInvalidRequest, map[string]any{"field": name, "max_bytes": MaxPathIDBytes},
			"path identifier %s is longer than %d bytes", name, MaxPathIDBytes)
	}
	return v, nil
}

func agentPath(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	if e != nil {
		return command.Input{}, e
	}
	tool, e := pathValue(r, "tool")
	return command.Input{AgentID: id, Tool: tool}, e
}

func principalPath(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	return command.Input{PrincipalID: id}, e
}

func principalKeyPath(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	if e != nil {
		return command.Input{}, e
	}
	key, e := pathValue(r, "key_id")
	return command.Input{PrincipalID: id, KeyID: key}, e
}

func approvalPath(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "id")
	return command.Input{ApprovalID: id}, e
}

// write returns the handler of a command endpoint.
func (a *api) write(ep *command.Endpoint, ids pathIDs) http.HandlerFunc {
	return a.writeWith(ep, ids, writeOptions{})
}

// writeOptions adapt the handler of a command endpoint (writeWith).
type writeOptions struct {
	// maxBody bounds the body; 0 is Config.MaxBodyBytes.
	maxBody int64
	// admit, if set, is called once the credentials are known: a non-nil
	// error is answered instead of building the command (it may set
	// headers on w, such as Retry-After).
	admit func(w http.ResponseWriter, c *call) *apiError
	// answered, if set, is called with the recorded event before its
	// answer is written (to set headers).
	answered func(w http.ResponseWriter, ev *domain.Event)
	// settle, if set, may replace the answer rendered from the recorded
	// event (an execute waits for its outcome), until deadline: the end
	// of the request's time (Config.RequestTimeout from its start).
	settle func(ctx context.Context, deadline time.Time, ev *domain.Event, status int, body []byte) (int, []byte)
}

// writeWith returns the handler of a command endpoint, adapted by o.
func (a *api) writeWith(ep *command.Endpoint, ids pathIDs, o writeOptions) http.HandlerFunc {
	maxBody := o.maxBody
	if maxBody <= 0 {
		maxBody = a.cfg.MaxBodyBytes
	}
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		deadline := time.Now().Add(a.cfg.RequestTimeout)
		c := newCall(r)
		buf := a.getBuf()
		defer a.putBuf(buf)
		e := readBody(w, r, maxBody, buf)
		c.body = buf.Bytes()
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		id, e := requestID(r)
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		c.creds, e = a.credentials(r, ep.Auth() == command.AuthPrincipal, ep.Auth() == command.AuthAgent)
		if e == nil && o.admit != nil {
			e = o.admit(w, c)
		}
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		var in command.Input
		if ids != nil {
			if in, e = ids(r); e != nil {
				a.fail(ctx, w, c, e)
				return
			}
		}
		in.Body = c.body
		ev, status, body, e := a.run(ctx, ep, &in, c, id)
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		if o.settle != nil {
			status, body = o.settle(ctx, deadline, ev, status, body)
		}
		if o.answered != nil {
			o.answered(w, ev)
		}
		writeJSON(w, status, body)
	}
}

// run builds the command of ep (command.HTTP), submits it and renders
// its answer: the recorded event, the status and the body.
func (a *api) run(ctx context.Context, ep *command.Endpoint, in *command.Input, c *call, id domain.RequestID) (*domain.Event, int, []byte, *apiError) {
	b, r := command.HTTP.Build(ep, in, &c.creds, id)
	if r != nil {
		return nil, 0, nil, rejected(r)
	}
	ev, e := a.submit(ctx, b.Command)
	if e != nil {
		return nil, 0, nil, e
	}
	if !b.Same(ev) {
		return nil, 0, nil, reject(domain.CodeConflict, map[string]any{"request_id": id.ID},
			"the request id %q was already used by a different request", id.ID)
	}
	if ev.Type != domain.EvCommandRejected {
		markDecided(ctx)
	}
	a.m.decision(ev)
	status, body, err := b.Render(ev)
	if err != nil {
		a.log.Error("rendering the reply", "type", ev.Type, "seq", ev.Seq, "err", err)
		return nil, 0, nil, failure(domain.CodeInternal, "the decision was recorded at seq %d but could not be rendered", ev.Seq)
	}
	return ev, status, body, nil
}

// requestID returns the RequestID of an HTTP command.
func requestID(r *http.Request) (domain.RequestID, *apiError) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > MaxIdempotencyKeyBytes {
		return domain.RequestID{}, reject(domain.CodeInvalidRequest,
			map[string]any{"header": "Idempotency-Key", "max_bytes": MaxIdempotencyKeyBytes},
			"Idempotency-Key is longer than %d bytes", MaxIdempotencyKeyBytes)
	}
	if key == "" {
		key = freshID()
	}
	return domain.RequestID{Source: command.HTTPSource, ID: key}, nil
}

// freshID returns a random request id.
func freshID() string { return "req_" + rand.Text() }
