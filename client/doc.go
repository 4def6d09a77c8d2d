// Package client is the Go client of agentgate, over HTTP (HTTPClient) and
// over Kafka (Client).
//
// # HTTP
//
// NewHTTP returns an HTTPClient of the gate's HTTP API with the surface of
// the Python (qwed_sdk) and TypeScript (@agentgate/sdk) SDKs: one method
// per endpoint, each taking a context, with typed results (the domain's
// reply types where the gate renders one) and typed refusals (*APIError:
// status, the gate's code, message, details; errors.Is with ErrNotFound,
// ErrUnauthorized, … and HasCode). Verify decisions (APPROVED, CORRECTED,
// PENDING, DENIED, BUDGET_EXCEEDED) are results, never errors. Every write
// carries an Idempotency-Key reused across its retries (connection errors,
// 408, 429 refusals, 502-504; Retry-After honoured, capped exponential
// backoff with jitter otherwise), so a retried write is decided once.
// Credentials travel in headers only and never appear in an error or in
// the printed form of a client or result (Secret).
//
// RegisterAgentClient registers an agent and returns an AgentClient bound
// to it (its id and token): the agent calls without the id, with a
// generated conversation and step context when none is given.
// VerifyAttestation and VerifyA2AAttestation check the gate's ES256
// attestations offline against its JWKS (GET /.well-known/jwks.json),
// with the gate's own rules. Do reaches any other endpoint with the same
// credentials, retries and errors.
//
// # Kafka
//
// Client publishes typed commands as CloudEvents (binary mode) on the
// requests topic, keyed by agent id, and reads replies with one
// long-lived reply reader per Client.
//
//   - Publish sends a command without replyto (async): its decision appears
//     on the decisions topic.
//   - Request sends it with replyto and correlationid and waits for the
//     reply, up to the context's deadline or Config.Timeout (ErrTimeout).
//   - PublishBatch sends many in one write (one produce request per
//     partition): the way to publish at a sustained rate.
//   - Intercept sends an AgentMessage (QWED A2A) and returns the typed
//     Verdict, a refusal as an *Error carrying its code; PublishA2A sends
//     it async (forwarded, it appears on agentgate.a2a.forwarded, keyed by
//     the receiver, the verdict in its headers).
//   - ConsumeDecisions reads the decisions topic in a consumer group, on
//     Watermill's router (streams/wmkafka): at least once, a failing or
//     panicking handler's decision dead-lettered with the reason.
//
// The write path and the reply reader are streams/kafkaout's Producer and
// Requester, which the gate uses too: one produce request (acks=all) per
// topic-partition, no batching timer.
//
// A command's RequestID is (Config.Source, Command.ID), scoped by the
// gate with the credential it carries (the principal of its API key, or
// its agent token): resending a command with the same ID and credential
// gets the recorded decision again, never a second one. A registration's
// key is the agent id the gate will mint, AgentIDFor(source, id,
// principal), so that the agent's later requests land on the same
// partition (registered with the admin key, it is forwarded there).
package client
