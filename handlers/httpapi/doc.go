// Package httpapi is agentgate's HTTP API: the endpoints of the QWED-Agent spec v1.1
// Appendix B, the principal and approval endpoints, QWED A2A's gateway
// (POST /a2a/intercept, the trust boundary's writes and reads, /a2a/health
// and /a2a/metrics), CloudEvents over HTTP on POST /events, and the
// operational endpoints (/healthz, /metrics, /.well-known/jwks.json). See
// docs/ARCHITECTURE.md, "Contracts" and "The HTTP gateway".
//
// Every write endpoint turns its request into one domain.Command and hands
// it to the Gate (the partition worker); the answer is the recorded event,
// rendered by domain.Reply. In order, a write request is:
//
//  1. read, bounded by Config.MaxBodyBytes (QWED-REQ-004, 413); POST
//     /a2a/intercept by Config.A2AMaxPayloadBytes plus a2a.MaxEnvelopeBytes,
//     and over Config.A2ARateLimit its credential (and that of a boundary
//     write) is answered QWED-AUTH-004 (429, Retry-After, unrecorded) once
//     step 3 knows it;
//  2. identified: RequestID{Source: "http", ID: the Idempotency-Key header
//     (at most MaxIdempotencyKeyBytes, else QWED-REQ-001), or a fresh random
//     id}; CloudEvents use RequestID{source, id} (a source in the "http"
//     namespace is QWED-REQ-001); either is scoped by the credentials of
//     step 3 (domain.RequestScope), so one principal's key never names
//     another's request;
//  3. authenticated: X-API-Key for principals (missing QWED-AUTH-001, unknown
//     QWED-AUTH-002, both 401; the admin key is compared with crypto/subtle),
//     the agent token ("agent_token" in the body or "Authorization: Bearer")
//     or a principal key for agent endpoints (none: QWED-AGENT-002, 401).
//     Secrets are hashed (SHA-256 hex) here and never logged or recorded;
//  4. decoded strictly (unknown members, wrong types, malformed JSON and
//     trailing data are QWED-REQ-001 naming the member or the offset);
//  5. submitted; the recorded event is checked to belong to this request
//     (same command type, credentials, target and payload: a reused
//     Idempotency-Key with a different request is QWED-REQ-409 and never
//     sees the other request's answer) and rendered.
//
// The body's mapping to a command (step 4), the check and rendering of
// step 5, the API-key authentication and the rejection record are
// handlers/command's, shared with the Kafka gate (command.HTTP names this
// API's headers in its refusals).
//
// A request refused in steps 1-5 by this package is recorded as a
// domain.CmdRejectRequest command (the error, the endpoint, the size and
// SHA-256 of the bytes read, never the bytes) before the error is answered,
// so the log holds the audit record of every rejection. Such a record gets
// a fresh request id: a refused request does not consume its
// Idempotency-Key, so the corrected request can be sent again with it.
// Requests to unknown routes and failures of the gate itself (QWED-SYS-002
// 503 when the gate is unavailable, QWED-SYS-003 503 when its disk is full,
// QWED-ENG-003 504 when the request's deadline passes) are not recorded.
//
// A refusal at authentication inside the gate (unknown agent, wrong token,
// suspended agent) is recorded with the payload withheld: its digest and
// size (domain.Withhold).
//
// Before a request is routed, the edge applies Config.RefusalLimit
// (edge.go): a client address whose refused requests (400, 401, 403, 404,
// 405, 413 that are not decisions) emptied its token bucket, or any address
// refused lately once all refusals emptied the global bucket, is answered
// QWED-AUTH-004 (429, Retry-After) on every endpoint, and nothing is
// recorded. LimitListener (listener.go) caps the open connections in total
// and per client address.
//
// Every error body is {"error": {"code", "message", "details"}}.
//
// Reads (GET) are served from the projections (projections.Store): an agent,
// its budget and activity are readable by its principal's key, the admin
// key and its own token; approvals by their principal and by the token of
// the agent they concern.
package httpapi
