// Package a2aproxy is agentgate's proxy mode: the gate fronts real A2A
// agents (the Agent2Agent protocol, JSON-RPC 2.0 over HTTP) and intercepts
// every message sent to them through the same code path as
// POST /a2a/intercept. See docs/ARCHITECTURE.md, "Proxy mode: fronting a
// real A2A agent".
//
// Each upstream is configured by the operator (NAME=URL, never from a
// request) and served under PathPrefix+NAME:
//
//   - GET .../NAME/.well-known/agent-card.json (and the older
//     .well-known/agent.json): the upstream's Agent Card, fetched from URL
//     (bounded, with a deadline, cached for Config.CardTTL) and rewritten so
//     that its JSON-RPC interface is the gate's proxy path; the interfaces
//     the gate does not proxy, the card's signatures (the rewrite breaks
//     them) and its security schemes (the gate's credentials apply) are
//     dropped;
//   - POST .../NAME: a JSON-RPC 2.0 request. SendMessage and
//     SendStreamingMessage (A2A 1.0; message/send and message/stream of
//     A2A 0.3) are intercepted part by part; every other method is refused
//     (UnsupportedOperation, or method not found).
//
// A message's parts become AgentMessages from the sender its metadata names
// (message.metadata.sender_agent_id) to NAME: a text part is payload type
// general with {"text": ...}; a data part is the payload type its metadata
// declares (part.metadata.payload_type, default general) with the data
// object as payload; file parts are refused (the gate cannot verify what it
// cannot read). The caller's credentials (X-API-Key or an agent's Bearer
// token) decide each part as they would on POST /a2a/intercept, with the
// Idempotency-Key derived from NAME, the messageId and the part's index. A
// message whose every part is forwarded is sent upstream as received (its
// credentials removed) and the upstream's answer returned as is; otherwise
// the answer is a JSON-RPC error whose data is the verdict (CodeNotForwarded)
// or the gate's refusal (CodeRefused). An upstream that is down, slow or
// answers out of bounds is CodeUpstream within the deadline. A messageId is
// forwarded at most once: a retry gets the recorded answer, or an error when
// the first attempt's outcome is unknown.
package a2aproxy
