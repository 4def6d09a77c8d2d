package httpapi

import (
	"net/http"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/a2a"
	"github.com/agentgate/agentgate/handlers/command"
)

// The A2A gateway (QWED A2A "HTTP gateway"): POST /a2a/intercept decides
// one AgentMessage and answers its verdict; the boundary endpoints change
// the trust boundary of the key's principal (the admin's: the gate-wide
// one). Both are commands like every other: built by package command,
// decided by the partition's worker, recorded, answered from the recorded
// event, so an Idempotency-Key retry gets the recorded verdict byte for
// byte.

// a2aRoutes registers the A2A endpoints.
func (a *api) a2aRoutes() {
	a.handle("POST /a2a/intercept", a.writeWith(command.A2AMessage, a.a2aInput, writeOptions{
		maxBody: a.a2aBodyLimit(), admit: a.a2aAdmit, answered: a2aRetryAfter,
	}))
	// A boundary write is recorded too (in Kafka mode by every
	// partition): it takes a token of the same edge limit.
	limited := writeOptions{admit: a.a2aAdmit}
	a.handle("POST /a2a/boundary/trust/{agent}", a.writeWith(command.A2ATrust, boundaryAgent, limited))
	a.handle("DELETE /a2a/boundary/trust/{agent}", a.writeWith(command.A2AUntrust, boundaryAgent, limited))
	a.handle("POST /a2a/boundary/block/{agent}", a.writeWith(command.A2ABlock, boundaryAgent, limited))
	a.handle("DELETE /a2a/boundary/block/{agent}", a.writeWith(command.A2AUnblock, boundaryAgent, limited))
	a.handle("POST /a2a/boundary/block-pair", a.writeWith(command.A2ABlockPair, nil, limited))
	a.handle("DELETE /a2a/boundary/block-pair", a.writeWith(command.A2AUnblockPair, nil, limited))
}

// a2aMaxPayload is the gate's max_payload_size_bytes.
func (a *api) a2aMaxPayload() int64 {
	if p := a.cfg.A2AMaxPayloadBytes; p > 0 {
		return p
	}
	return a2a.DefaultMaxPayloadBytes
}

// a2aBodyLimit is the body limit of POST /a2a/intercept: the largest
// payload the gate verifies plus the room of the message's other members
// (a2a.MaxEnvelopeBytes).
func (a *api) a2aBodyLimit() int64 { return a.a2aMaxPayload() + a2a.MaxEnvelopeBytes }

// a2aInput is the input of POST /a2a/intercept besides its body: the
// payload bound the message is decoded under.
func (a *api) a2aInput(*http.Request) (command.Input, *apiError) {
	return command.Input{MaxPayload: int(a.a2aMaxPayload())}, nil
}

// boundaryAgent extracts the agent of a boundary path.
func boundaryAgent(r *http.Request) (command.Input, *apiError) {
	id, e := pathValue(r, "agent")
	return command.Input{AgentID: id}, e
}

// a2aAdmit applies the A2A edge rate limit (Config.A2ARateLimit) to the
// credential of the request (its principal, or its agent token's hash):
// over it, 429 with Retry-After, nothing recorded. It holds for messages
// and boundary writes, on their paths and on POST /events.
func (a *api) a2aAdmit(w http.ResponseWriter, c *call) *apiError {
	return a.admitCredential(a.a2aLimiter, w, c)
}

// admitCredential takes a token of l (nil: no limit) for the credential
// of the request (its principal, or its agent token's hash): over it, the
// refusal with Retry-After set on w, nothing recorded.
func (a *api) admitCredential(l *limiter, w http.ResponseWriter, c *call) *apiError {
	if l == nil {
		return nil
	}
	e, wait := l.allow(domain.RequestScope(c.creds.Principal, c.creds.TokenHash), a.cfg.Clock())
	if e != nil {
		writeRetryAfter(w, wait)
	}
	return e
}

// a2aRetryAfter sets the Retry-After header of a rate-limited verdict
// (command.A2ARetryAfter); other events set none.
func a2aRetryAfter(w http.ResponseWriter, ev *domain.Event) {
	if s := command.A2ARetryAfter(ev); s != "" {
		w.Header().Set("Retry-After", s)
	}
}
