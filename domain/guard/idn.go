package guard

import (
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// MaxHostBytes bounds a host name after conversion to A-labels (RFC 1035:
// 253 bytes without the root's dot).
const MaxHostBytes = 253

// idnProfile maps and validates host names as UTS #46 does for lookup,
// non-transitionally (IDNA2008: "ß" and "ς" stay, ZWJ/ZWNJ only where
// the ContextJ rules allow them): compatibility mapping and case folding
// (fullwidth letters and digits become ASCII, U+3002, U+FF0E and U+FF61
// become dots), disallowed code points refused, hyphen, joiner and Bidi
// rules checked, and every "xn--" label decoded, checked the same way
// and refused when it decodes to ASCII or to something the mapping would
// change. ASCII outside letters, digits and hyphens is left to the
// label check that follows (the gate accepts "_" in names, as before).
var idnProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)

// NormalizeHost returns the ASCII form of a host name: lower case, its
// trailing dots dropped, each label an LDH label (letters, digits,
// hyphens; "_" too) or the A-label ("xn--…", RFC 3492 Punycode) of an
// IDNA2008 U-label. A name that is ASCII and holds no "xn--" label is
// only lower-cased; any other goes through UTS #46 mapping and
// validation (see idnProfile), so "ｍｅｔａｄａｔａ。google.internal" is
// "metadata.google.internal" and "Bücher.example" is
// "xn--bcher-kva.example". It refuses what it cannot convert: invalid
// UTF-8, disallowed code points, a bogus or non-canonical "xn--" label,
// an empty label, a label over 63 bytes or a name over MaxHostBytes
// after conversion. It does not read IP literals: the caller parses the
// result (a fullwidth "１２７.０.０.１" becomes "127.0.0.1" here).
func NormalizeHost(host string) (string, error) {
	if host == "" || len(host) > MaxURLBytes {
		return "", errors.New("empty or longer than 8192 bytes")
	}
	if !utf8.ValidString(host) {
		return "", errors.New("not valid UTF-8")
	}
	out := strings.ToLower(host)
	if !isASCII(out) || hasACELabel(out) {
		a, err := idnProfile.ToASCII(host)
		if err != nil {
			return "", errors.New("not a valid internationalised name (UTS #46): " + idnReason(err))
		}
		out = a
	}
	out = strings.TrimRight(out, ".")
	switch {
	case out == "":
		return "", errors.New("empty after conversion")
	case len(out) > MaxHostBytes:
		return "", errors.New("longer than 253 bytes after conversion")
	}
	for l := range strings.SplitSeq(out, ".") {
		if !validLabel(l) {
			return "", errors.New("invalid host label '" + l + "'")
		}
	}
	return out, nil
}

// idnReason is the library's error without the input, which it quotes
// (the input may hold any code point; the reason is ASCII).
func idnReason(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '"'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if !isASCII(s) || s == "" {
		return "invalid"
	}
	return strings.TrimPrefix(strings.TrimSuffix(s, ":"), "idna: ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasACELabel reports whether the lower-case ASCII name s holds a label
// starting "xn--".
func hasACELabel(s string) bool {
	return strings.HasPrefix(s, "xn--") || strings.Contains(s, ".xn--")
}
