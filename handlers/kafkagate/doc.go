// Package kafkagate runs the gate on Kafka (docs/ARCHITECTURE.md: the request
// path, the contracts): a consumer group reads the requests topic; every
// assigned partition P gets its own single-writer worker (handlers.Worker) over
// the events partition P (the log, streams/kafkalog) and the projections in
// DATA/partitions/P/state. The worker restores from its checkpoint and the log
// tail, then decides the requests of partition P in offset order, appends
// (acks=all), applies, replies to the request's replyto topic with its
// correlationid, publishes every recorded event to the decisions topic, and only
// then commits the request offset (every 200 ms while requests flow, and when
// the partition is released: an answered request not yet committed is
// redelivered to the next owner, which answers it from the log).
//
// Output. Replies, decisions, dead letters and forwards are written with
// kafkaout.Producer: one produce request (acks=all) per topic-partition per
// flush, no batching timer, so a reply costs one round trip; complete
// batches whatever was answered while the previous flush was in flight.
//
// Engines. Config.Verifier runs the verification engines on every
// verify_action, and on every qwed.a2a.message of code or with a logic
// dsl, before its decision (handlers.WorkerConfig.Verifier), as in
// embedded mode. A qwed.verify request (QWED protocol v1.0; data = the body of
// POST /verify, the API key in x-api-key, the protocol version in the
// header qwed-protocol-version) is verified by Config.Engines off the
// reading goroutine, recorded in the partition's log (its attestations
// signed there) and answered with POST /verify's body and status.
//
// Partition moves. Each partition runs inside a kafka-go Generation: when
// the group rebalances, the partition's reader stops, its in-flight batch
// is appended or fails, the worker stops, and only then does the
// generation end and the new owner start (restoring from the log). A
// process that lost its partition without noticing (killed, paused) is
// fenced by the log: its appends no longer extend the chain, the batch
// fails, and it replies with none of them.
//
// Input. A request is a CloudEvent (binary mode with ce_* headers or structured
// mode) whose type is a command of the contracts (docs/ARCHITECTURE.md) and
// whose data is the body of the matching HTTP endpoint: handlers/command builds
// it (command.Kafka.BuildEvent) as it builds the HTTP API's. Its RequestID is
// (source, id): a redelivered request gets the recorded decision again.
// Credentials: agent commands carry the agent token in the data (agent_token) as
// on HTTP; principal commands (register, approval resolution) carry the API key
// in the Kafka header x-api-key, hashed on arrival and checked like X-API-Key
// (never recorded, never logged). Undecodable or refused input — not a
// CloudEvent, an unknown type, data that is not JSON, a body that breaks the
// endpoint's schema (refused by the transport or by Decide with a QWED-REQ code)
// — goes to the dead-letter topic with the reason (header agentgate-reason) and
// its origin (agentgate-origin: topic/partition/offset) and, when replyto is
// present, gets an error reply; its audit record is appended like an HTTP
// rejection; it never stops the partition. Refused credentials are answered and
// audited but not dead-lettered. A reply whose replyto topic cannot be written
// goes to the dead-letter topic too (the reply, with the reason,
// agentgate-replyto and agentgate-origin); the decision stands.
//
// Poison pills. A request whose processing kills the process would be
// redelivered to every next owner of its partition. Each partition keeps
// a flight record (DATA/partitions/P/flight, memory-mapped: it outlives
// the process at the cost of a memory store per request): the last
// request offset handed to processing, the last one answered, whether the
// partition was released cleanly. After a death, the requests that were in
// flight are retried one at a time, each answered and committed before
// the next is read, so that a death is charged to one request; one that
// killed the gate MaxAttempts times is dead-lettered undecided (reply
// QWED-SYS-001, audited as a refusal at its position).
//
// Routing. The Kafka key is the agent id (docs/ARCHITECTURE.md, "Contracts"),
// partitioned with murmur2 (Kafka's Java default; PartitionFor). A registration
// mints its agent id from its RequestID (domain.AgentIDFor; the request is
// scoped by the principal of its API key), so its key is AgentIDFor(source, id,
// principal): the client computes it before sending (package client does, for
// the agent's principal). A request that arrives on the wrong partition (another
// partitioner, no key) is forwarded once to the partition of its agent, so that
// an agent's requests are always decided by one writer and identifiers minted
// from request ids never collide across partitions.
//
// A2A (QWED A2A, issue 13). A qwed.a2a.message (data = the AgentMessage,
// keyed by its sender, decided by the sender's partition) is answered
// with its verdict and published on the decisions topic whatever its
// status; a forwarded one's message is produced to the forwarded topic
// (agentgate.a2a.forwarded) by the partition's forwarder (forward.go): an
// outbox read from the log, once per verdict across restarts and
// rebalances, its progress a cursor committed in Kafka. A qwed.a2a.boundary
// is principal-wide: the partition it arrives on copies it to every other
// partition, each records it, and only the original is answered. An agent
// token travels in the header authorization ("Bearer <token>").
//
// HTTP over Kafka. HTTPGate is the Gate the HTTP API submits to (this
// package does not import the API: cmd/agentgate wires one into the
// other): the API builds and authenticates the command as in embedded mode
// and HTTPGate sends it
// (signed with an HMAC derived from the admin key hash, header
// agentgate-mac, so that only gate instances can send pre-authenticated
// commands) to the partition of its agent, waits on the instance's one
// long-lived reply reader, and answers the recorded event; past the
// timeout the API answers 504.
// Reads are served by ReadModel: a local projection store fed by every
// events partition, chain-checked. An HTTP answer waits until the
// instance's read model has applied the event it reports (its partition
// and seq), so a client reads its own writes through the same instance; a
// lookup that finds nothing (an API key, an agent, an approval, the
// approval a resolution is routed by) first catches the read model up with
// the end of every events partition, so what another instance has
// acknowledged is found too.
//
// Principal-wide state. A command that changes what every partition needs
// (API keys, tool registries, configuration, A2A trust boundaries; from
// HTTP or a CloudEvent) is decided on partition 0 only, in its offset
// order, marked domain.Command.Global; every other partition follows
// events partition 0 and, before deciding each batch, records the changes
// it has not copied yet as one principal.state_copied event (partition
// 0's seq, hash and offset, and the changes), so that its log replays
// alone. HTTPGate answers once every partition holds the copy.
package kafkagate
