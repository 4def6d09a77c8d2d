// Package verify is the service of the QWED protocol v1.0: POST /verify
// (single §5.1 and batch §5.3 requests), GET /engines (§4.2), the
// qwed.verify CloudEvent, and the engine verdicts the gate attaches to
// verify_action commands.
//
// # One call, in order
//
//  1. Version negotiation (§9.2): a QWED-Protocol-Version header with major
//     version 1 ("1", "1.0", "1.2.3") is accepted; any other major, or a
//     malformed version, is refused with QWED-REQ-001 (400) naming the
//     supported versions. Every response carries metadata.protocol_version
//     "1.0.0" and the QWED-Protocol-Version response header.
//  2. Decoding and JSON Schema validation (§5.1, §5.3; package schemas):
//     a missing member is QWED-REQ-002, a query over 100000 characters
//     QWED-REQ-004, an unknown type QWED-REQ-005 (status UNSUPPORTED),
//     anything else QWED-REQ-001 with the sorted violations in details.
//  3. Routing by type to the engine registry. natural_language is routed
//     by one deterministic rule (NaturalLanguageRoute), by parsing: a
//     query that parses as a QWED-Logic DSL expression goes to logic, an
//     arithmetic claim of the math engine's syntax to math; anything else
//     is UNSUPPORTED (QWED-REQ-005) with details.accepted naming what is
//     accepted. A registered type whose engine is
//     not built in is QWED-ENG-004. Prose types (fact, reasoning,
//     natural_language) are scanned for prompt-injection phrases first
//     (§10.2): a hit is BLOCKED with QWED-SEC-001.
//  4. The engine runs under options.timeout_ms (default 30000) as a
//     context deadline; past it the item is TIMEOUT (QWED-ENG-003). A panic
//     is ERROR (QWED-ENG-002). The engine's params are validated against
//     the §5.2 schema first (QWED-REQ-001).
//  5. Audit (§10.4): every call that got past validation is recorded in the
//     gate's log as one qwed.verify command (domain.QWEDVerify): per item,
//     the digest of the request item and of the outcome. The gate signs
//     the attestations asked for (options.include_attestation): ES256 JWTs
//     whose claims bind the request digest (RFC 8785, SHA-256) to the
//     outcome digest, the engine, the status and the log position. The
//     latency is neither recorded nor signed. Calls refused in steps 1-2
//     are recorded as rejections by the transport, like every refusal.
//  6. The response (§6.1; batch §6.4) is rendered with the HTTP status of
//     §6.2, except that an error code's §8.3 status wins where both apply
//     (§8.4's own example answers QWED-REQ-003 with status ERROR and 400).
//     Error bodies carry documentation_url (DocsBaseURL + code).
//
// # Batches
//
// Items run in parallel, at most options.max_parallel (default 10) at a
// time. With fail_fast, the answer is cut at the first item, in request
// order, that is not VERIFIED: every later item is SKIPPED (status
// "SKIPPED", an additive status of §9.3), whether or not it had started,
// so the answer does not depend on scheduling; running items past the cut
// are cancelled. summary.failed counts the answered items that are not
// VERIFIED, summary.skipped the skipped ones, and success_rate is
// verified/total in percent with one decimal.
package verify
