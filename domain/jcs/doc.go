// Package jcs computes the RFC 8785 JSON Canonicalization Scheme (JCS) form of a
// JSON text. agentgate hashes canonical JSON for fingerprints, request digests
// and attestation digests (docs/ARCHITECTURE.md, "Where the specifications
// disagree"), so two requests that differ only in whitespace, member order or
// number spelling hash alike.
//
// The canonical form is:
//
//   - no insignificant whitespace;
//   - object members sorted by the UTF-16 code units of their (unescaped)
//     names (RFC 8785 §3.2.3);
//   - strings written as UTF-8 with only the mandatory escapes: \" and \\,
//     \b \f \n \r \t, and \u00xx (lowercase hex) for the other control
//     characters below U+0020 (RFC 8785 §3.2.2.2);
//   - numbers parsed as IEEE 754 doubles and serialized like ECMAScript's
//     Number.prototype.toString: shortest round-trip digits, plain notation
//     for 1e-6 <= |x| < 1e21, exponent notation ("1e+21", "1e-7") outside
//     it, and -0 written as 0 (RFC 8785 §3.2.2.3);
//   - literals true, false and null unchanged.
//
// Input that is not I-JSON (RFC 7493) is rejected rather than repaired: the
// returned error wraps exactly one of the sentinel errors (ErrInvalidJSON,
// ErrInvalidUTF8, ErrDuplicateKey, ErrInvalidNumber, ErrTooDeep,
// ErrTrailingData) and carries the byte offset of the fault as an *Error.
// Nesting deeper than MaxDepth arrays and objects is rejected. The package
// never panics on any input.
//
// The package is pure: it reads no clock, draws no randomness and performs no
// IO, so it may be used from agentgate's deterministic core. Transform and
// AppendTransform are safe for concurrent use; AppendTransform reuses pooled
// scratch buffers and allocates nothing beyond growing dst in steady state.
// AppendTransformNested canonicalizes a value its caller embeds in a
// canonical structure it writes itself (the request digests of package
// domain do so), counting the caller's containers toward MaxDepth.
package jcs
