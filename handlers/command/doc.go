// Package command turns what a transport received into a domain.Command,
// and the recorded event back into the answer, for every transport: the
// HTTP API (handlers/httpapi, its endpoints and POST /events) and the
// Kafka gate (handlers/kafkagate, the requests topic). One mapping means
// the same body is the same command, refused with the same codes and
// answered with the same bytes, whichever way it came.
//
// It holds:
//
//   - the endpoints (Endpoint): the strict decoding of each JSON body
//     (unknown, repeated and wrong-case members, wrong types, malformed
//     JSON and trailing data are QWED-REQ-001 naming the member or the
//     offset), the field bounds (domain.CheckBounds, QWED-REQ-004), the
//     agent fields of QWED-Agent spec v1.1 §4.1 (agent_id checked, agent_token hashed)
//     and the secrets minted for a command (an agent token, an API key),
//     of which only the hash enters the command;
//   - Transport.Build, the one path from an endpoint, its input and the
//     authenticated credentials to a command with its RequestID, scope,
//     principal and token hash; Built renders the answer from the recorded
//     event (domain.Reply, a minted secret added to the answer of the
//     request that minted it) and checks that the event is this request's;
//   - the CloudEvent commands of docs/ARCHITECTURE.md's contracts (ForEvent, EventTypes,
//     BuildEvent) and the refusal of a source in the HTTP API's namespace;
//   - Rejection, a refusal with its status and catalogue error, its error
//     body, and RejectionCommand, the one builder of the audit record
//     (domain.CmdRejectRequest) of a refused request.
//
// The transports keep what is theirs: reading bodies and headers, rate
// limits, submitting to the gate, and the wire form of the answer.
package command
