package attest

import (
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/agentgate/agentgate/domain/strictjson"
)

// MaxTokenBytes bounds the length of a token accepted by Verify.
const MaxTokenBytes = 8 << 10

// The verification errors. Every error returned by Verify wraps one of
// them (or ErrInvalidJWKS); test with errors.Is.
var (
	// ErrMalformed reports a token that is not a compact JWS: wrong number
	// of segments, bad base64url, a header or claims that are not JSON or
	// that repeat a member name (exactly or in another case), critical
	// header extensions, or a token longer than MaxTokenBytes.
	ErrMalformed = errors.New("malformed attestation token")
	// ErrAlgorithm reports an alg other than ES256 (none, HS256, RS256 …).
	ErrAlgorithm = errors.New("attestation algorithm is not ES256")
	// ErrType reports a typ header other than Typ.
	ErrType = errors.New("token is not a qwed attestation")
	// ErrUnknownKey reports a missing kid or a kid that the JWKS lacks.
	ErrUnknownKey = errors.New("attestation signing key is unknown")
	// ErrSignature reports a signature that does not verify with the key,
	// or (Verify) one in its high-S encoding.
	ErrSignature = errors.New("attestation signature is invalid")
	// ErrExpired reports a token whose exp claim has passed.
	ErrExpired = errors.New("attestation has expired")
	// ErrIssuer reports an iss claim that is not a node DID.
	ErrIssuer = errors.New("attestation issuer is not a qwed node")
)

// Verify checks token offline against the JWKS document jwks and returns
// its claims. See the package documentation for the checks; each failure
// wraps one of the sentinel errors. For many tokens against one JWKS, parse
// it once with ParseJWKS and call KeySet.Verify.
func Verify(token string, jwks []byte) (*Claims, error) {
	set, err := ParseJWKS(jwks)
	if err != nil {
		return nil, err
	}
	return set.Verify(token)
}

// header is the part of a JOSE header that Verify reads.
type header struct {
	alg, typ, kid string
}

// parseHeader decodes and checks the protected header of token, before any
// key is touched: alg, typ and kid must be strings, alg ES256, typ Typ, and
// no "crit" extension may be present (RFC 7515 §4.1.11).
func parseHeader(token string) (header, error) { return parseHeaderTyp(token, Typ) }

// parseHeaderTyp is parseHeader for tokens of type typ.
func parseHeaderTyp(token, wantTyp string) (header, error) {
	seg, _, ok := strings.Cut(token, ".")
	if !ok {
		return header{}, fmt.Errorf("%w: not a compact JWS", ErrMalformed)
	}
	fields, err := decodeHeader(seg)
	if err != nil {
		return header{}, err
	}
	if _, ok := fields["crit"]; ok {
		return header{}, fmt.Errorf("%w: critical header extensions are not supported", ErrMalformed)
	}
	alg, _ := fields["alg"].(string)
	typ, _ := fields["typ"].(string)
	kid, _ := fields["kid"].(string)
	h := header{alg: alg, typ: typ, kid: kid}
	if alg != "ES256" {
		return h, fmt.Errorf("%w: alg %q", ErrAlgorithm, fields["alg"])
	}
	if typ != wantTyp {
		return h, fmt.Errorf("%w: typ %q, want %q", ErrType, fields["typ"], wantTyp)
	}
	if kid == "" {
		return h, fmt.Errorf("%w: header has no kid", ErrUnknownKey)
	}
	return h, nil
}

// decodeHeader decodes the base64url JOSE header segment seg as a JSON
// object.
func decodeHeader(seg string) (map[string]any, error) {
	raw, err := b64.DecodeString(seg)
	if err != nil {
		return nil, fmt.Errorf("%w: decoding header: %w", ErrMalformed, err)
	}
	if err := uniqueMembers(raw, "header"); err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("%w: decoding header: %w", ErrMalformed, err)
	}
	return fields, nil
}

// uniqueMembers refuses (ErrMalformed) a header or claims set raw in which
// a member name repeats in its object, at any depth, exactly or in another
// case (strictjson's rule: after unescaping, with Unicode simple folding).
// encoding/json keeps the last of two equal names and matches a claim to
// its field without regard to case, where another verifier may read the
// first or the exact name: {"alg":"none","alg":"ES256"} or {"agent_id":"a",
// "AGENT_ID":"b"} would mean one thing here and another there. Malformed
// JSON is left to the decoder that follows, which reports it.
func uniqueMembers(raw []byte, what string) error {
	var e *strictjson.Error
	if err := strictjson.Check(raw, nil); errors.As(err, &e) && e.Kind != strictjson.KindSyntax {
		return fmt.Errorf("%w: %s: %w", ErrMalformed, what, err)
	}
	return nil
}

// headerKID returns the kid of a token's header (an attestation, an A2A
// attestation or a checkpoint) without verifying it.
func headerKID(token string) (string, error) {
	h, err := parseHeader(token)
	for _, typ := range []string{A2ATyp, CheckpointTyp} {
		if !errors.Is(err, ErrType) {
			break
		}
		h, err = parseHeaderTyp(token, typ)
	}
	return h.kid, err
}

// keyFor checks token's size and header (ES256, the type typ) and returns
// the key of its kid from the set.
func (s *KeySet) keyFor(token, typ string) (*ecdsa.PublicKey, error) {
	if len(token) > MaxTokenBytes {
		return nil, fmt.Errorf("%w: token of %d bytes exceeds %d", ErrMalformed, len(token), MaxTokenBytes)
	}
	h, err := parseHeaderTyp(token, typ)
	if err != nil {
		return nil, err
	}
	pub := s.keys[h.kid]
	if pub == nil {
		return nil, fmt.Errorf("%w: kid %q is not in the JWKS", ErrUnknownKey, h.kid)
	}
	return pub, nil
}

// Verify checks token against the set and returns its claims (see the
// package documentation for the checks): what a relying party runs before
// it acts on a decision. A signature in its high-S encoding is refused
// (ErrSignature) and an exp that has passed is ErrExpired.
func (s *KeySet) Verify(token string) (*Claims, error) {
	claims := &Claims{}
	if err := s.parse(token, Typ, IssuerPrefix, claims, asToken); err != nil {
		return nil, err
	}
	return claims, nil
}

// VerifyRecord checks an attestation read from the gate's log, as an audit
// does: the checks of Verify except two. An exp that has passed is
// accepted, since an expired attestation is still the record of the
// decision it signed; and a signature's high-S encoding is accepted, since
// the log's hash chain, not the signature's encoding, binds the recorded
// bytes (tokens signed before signatures were low-S stay verifiable).
func (s *KeySet) VerifyRecord(token string) (*Claims, error) {
	claims := &Claims{}
	if err := s.parse(token, Typ, IssuerPrefix, claims, asRecord); err != nil {
		return nil, err
	}
	return claims, nil
}

// use says how a token is checked: as a token a relying party acts on, as
// one whose time claims the caller checks against its own clock, or as a
// record of the log.
type use int

const (
	asToken use = iota
	asOffline
	asRecord
)

// parse checks token (size, header with the type typ, kid in the set,
// ES256 signature, strict decoding, an issuer of issuerPrefix and a node
// ID; as a token or offline also low-S; as a token also expiry by the
// wall clock) and decodes its claims into claims. Failures wrap the
// package's sentinel errors.
func (s *KeySet) parse(token, typ, issuerPrefix string, claims jwt.Claims, u use) error {
	pub, err := s.keyFor(token, typ)
	if err != nil {
		return err
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{"ES256"}), jwt.WithStrictDecoding()}
	if u != asToken {
		opts = append(opts, jwt.WithoutClaimsValidation())
	}
	if i := strings.LastIndexByte(token, '.'); u != asRecord && i >= 0 {
		if sig, err := b64.DecodeString(token[i+1:]); err == nil && highS(sig) {
			return fmt.Errorf("%w: high-S signature (only s <= n/2 is accepted)", ErrSignature)
		}
	}
	if parts := strings.Split(token, "."); len(parts) == 3 {
		if raw, err := b64.DecodeString(parts[1]); err == nil {
			if err := uniqueMembers(raw, "claims"); err != nil {
				return err
			}
		}
	}
	parser := jwt.NewParser(opts...)
	_, err = parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return pub, nil })
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenMalformed):
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	case errors.Is(err, jwt.ErrTokenExpired):
		return fmt.Errorf("%w: %w", ErrExpired, err)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrECDSAVerification):
		return fmt.Errorf("%w: %w", ErrSignature, err)
	default:
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if iss, _ := claims.GetIssuer(); !strings.HasPrefix(iss, issuerPrefix) || len(iss) == len(issuerPrefix) {
		return fmt.Errorf("%w: iss %q", ErrIssuer, iss)
	}
	return nil
}
