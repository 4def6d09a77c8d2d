// Package attest issues and verifies agentgate's decision attestations:
// ES256 JSON Web Tokens (RFC 7519, RFC 7518 §3.4) that bind a decision to
// its request digest and its log position (the attestations of QWED A2A;
// invariant 1 of docs/ARCHITECTURE.md).
//
// Signing keys are P-256 keys kept in a Keyring under dataDir/keys/, one
// PKCS#8 PEM file (mode 0600) per key, named by creation sequence and key
// ID. The newest key is active; Rotate makes a new active key and keeps the
// old ones, which stay in the JWKS so that attestations they signed still
// verify. Key creation is the only use of randomness.
//
// Signatures are deterministic (RFC 6979, through crypto/ecdsa's
// PrivateKey.Sign with a nil random source), and the header and claims are
// encoded from fixed structures, so the same claims and key always give the
// byte-identical token: a replayed decision reproduces its attestation.
//
// A token's header is {"alg":"ES256","kid":<RFC 7638 thumbprint>,
// "typ":"qwed-attestation+jwt"}; its claims are those of Claims. Verify
// checks a token offline against a JWKS document: the algorithm must be
// ES256 (none, HMAC and any other algorithm are refused before any key is
// used), the type must be Typ, the kid must name a key of the set, the
// signature must be valid, an exp claim if present must not have passed,
// and the issuer must be a node DID. Every failure wraps one of the
// package's sentinel errors.
//
// The same signers sign QWED A2A verdicts (a2a.Signer): header typ
// "qwed-a2a-attestation+jwt", issuer "did:qwed:a2a:<node ID>", sub the
// payload digest, jti the trace ID, exp iat + 24 h and the private claim
// qwed_a2a. KeySet.VerifyA2A checks them as Verify checks attestations,
// with the expiry taken against the time its caller passes; the typ keeps
// each kind of token from passing for another.
//
// Keyring, KeySet and the signers are safe for concurrent use.
package attest
