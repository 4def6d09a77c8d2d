// Package conformance is the QWED protocol v1.0 §11 conformance runner:
// it sends the protocol's vectors (embedded JSON data, each naming the
// section it tests and the level of §11.1 it counts for) to any QWED
// server over HTTP and reports, per vector, PASS, FAIL with the reason, or
// SKIP, and the level the server reached: Basic (request/response format
// and at least one engine), Standard (Basic, all 8 engines of §4.1 and the
// error codes of §8.3), Full (Standard, the QWED-Logic DSL of §7,
// attestations and batches).
//
// The runner speaks HTTP only and imports no server code but the
// attestation verifier: a server of another implementation is judged by
// the same vectors as this one. Responses are checked against the
// protocol's schemas (schemas.Response, schemas.BatchResponse), which
// tolerate fields an implementation adds. Every exchange is bounded: a
// per-request timeout, MaxResponseBytes per body, at most MaxRedirects
// redirects, only to the same host, and the credential headers are never
// sent on a redirect.
package conformance
