package verify

import (
	"strconv"
	"strings"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
)

// Protocol constants (QWED protocol v1.0 §9).
const (
	// ProtocolVersion is the version every response names (§9.2).
	ProtocolVersion = "1.0.0"
	// VersionHeader is the negotiation header of §9.2.
	VersionHeader = "QWED-Protocol-Version"
	// SupportedMajor is the one major version served.
	SupportedMajor = 1
	// DocsBaseURL prefixes an error code in documentation_url (§8.4).
	DocsBaseURL = "https://qwed.ai/docs/errors/"
	// maxVersionBytes bounds the version header that is echoed back.
	maxVersionBytes = 32
)

// SupportedVersions lists the protocol versions a client may ask for.
var SupportedVersions = []string{"1.0"}

// Negotiate checks the client's QWED-Protocol-Version header (§9.2): ""
// (absent) and any version of major 1 ("1", "1.0", "1.0.0", "1.3") are
// accepted; another major or a malformed version is refused with
// QWED-REQ-001 and the supported versions in details.
func Negotiate(header string) *Problem {
	v := strings.TrimSpace(header)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ".")
	ok := len(parts) <= 3
	major := -1
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || (len(p) > 1 && p[0] == '0') || len(p) > 9 {
			ok = false
			break
		}
		if i == 0 {
			major = n
		}
	}
	shown := v
	if len(shown) > maxVersionBytes {
		shown = shown[:maxVersionBytes]
	}
	details := map[string]any{"header": VersionHeader, "requested": shown, "supported": SupportedVersions}
	if !ok {
		return newProblem(domain.CodeInvalidRequest, details, "malformed %s %q: want MAJOR[.MINOR[.PATCH]]", VersionHeader, shown)
	}
	if major != SupportedMajor {
		return newProblem(domain.CodeInvalidRequest, details,
			"protocol version %s is not supported: this verifier speaks major version %d (%s)", shown, SupportedMajor, strings.Join(SupportedVersions, ", "))
	}
	return nil
}

// Problem is a §8.4 error: a code, a message, details and the
// documentation URL, with the status the response takes.
type Problem struct {
	Status  engines.Status
	Code    domain.Code
	Message string
	Details map[string]any
}

func newProblem(code domain.Code, details map[string]any, format string, args ...any) *Problem {
	p := &Problem{Status: engines.Error, Code: code, Message: sprintf(format, args...), Details: details}
	switch code {
	case domain.CodeUnsupportedType:
		p.Status = engines.Unsupported
	case domain.CodeTimeout:
		p.Status = engines.Timeout
	case domain.CodeSecurityViolated, domain.CodePromptInjection, domain.CodePIIDetected:
		p.Status = engines.Blocked
	}
	return p
}

// CodeHTTPStatus is the HTTP status of a code in a QWED protocol reply:
// the gate catalogue's (domain.Code.HTTPStatus), which §8.3 agrees with
// but in one place: QWED-REQ-004 is a query longer than §5.1's 100000
// characters, 400 here; the catalogue's 413 is for a request body over
// the transport's byte limit.
func CodeHTTPStatus(code domain.Code) int {
	if code == domain.CodeTooLong {
		return 400
	}
	return code.HTTPStatus()
}

// httpStatus is the status of a response: §6.2's for its status, except
// that for ERROR, UNSUPPORTED, BLOCKED and TIMEOUT the error code's §8.3
// status wins.
func httpStatus(st engines.Status, code domain.Code) int {
	switch st {
	case engines.Verified, engines.Failed, engines.Corrected:
		return 200
	}
	if code != "" {
		return CodeHTTPStatus(code)
	}
	return st.HTTPStatus()
}

// ErrorBody is the "error" member of a response (§6.1, §8.4).
type ErrorBody struct {
	Code             string         `json:"code"`
	Message          string         `json:"message"`
	Details          map[string]any `json:"details,omitempty"`
	DocumentationURL string         `json:"documentation_url"`
}

func errorBody(code domain.Code, msg string, details map[string]any) *ErrorBody {
	return &ErrorBody{Code: string(code), Message: msg, Details: details, DocumentationURL: DocsBaseURL + string(code)}
}
