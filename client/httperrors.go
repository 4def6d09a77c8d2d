package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// APIError is a refusal answered by the gate over HTTP: the body
// {"error": {"code", "message", "details"}} with its status. Code is the
// catalogue's (docs/errors.md). RequestID is the Idempotency-Key the write
// was sent with ("" for a read): sending the corrected request again with
// it (WithIdempotencyKey) is safe, since a refused request does not
// consume its key. RetryAfter is the Retry-After the gate asked for (0:
// none).
//
// errors.Is(err, ErrNotFound) and the other status sentinels match an
// APIError by status; HasCode matches it by code; errors.As(err, &e) with
// e an *Error (the Kafka client's refusal) also succeeds, so ErrorCode
// reads the code of either transport.
type APIError struct {
	Status     int
	Code       domain.Code
	Message    string
	Details    map[string]any
	RequestID  string
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("agentgate refused the request (%d %s): %s", e.Status, e.Code, e.Message)
}

// Is matches the status sentinels (ErrBadRequest, ErrUnauthorized, …).
func (e *APIError) Is(target error) bool {
	s, ok := target.(*statusSentinel)
	return ok && s.match(e.Status)
}

// As lets errors.As find the refusal as the Kafka client's *Error.
func (e *APIError) As(target any) bool {
	if p, ok := target.(**Error); ok {
		*p = &Error{Status: e.Status, Code: e.Code, Message: e.Message, Details: e.Details}
		return true
	}
	return false
}

// statusSentinel is an error matched by the APIErrors of some statuses.
type statusSentinel struct {
	msg   string
	match func(status int) bool
}

func (s *statusSentinel) Error() string { return s.msg }

func statusIs(msg string, statuses ...int) *statusSentinel {
	return &statusSentinel{msg: msg, match: func(st int) bool {
		for _, s := range statuses {
			if s == st {
				return true
			}
		}
		return false
	}}
}

// The status sentinels: errors.Is(err, ErrNotFound) reports whether err
// is an *APIError of that kind. Each names the gate's codes it carries.
var (
	// ErrBadRequest: 400 and 422, a request the gate could not accept
	// (QWED-REQ-001 and the engines' input codes).
	ErrBadRequest error = statusIs("agentgate: bad request", 400, 413, 422)
	// ErrUnauthorized: 401, a missing or unknown API key (QWED-AUTH-001,
	// QWED-AUTH-002) or agent token (QWED-AGENT-002).
	ErrUnauthorized error = statusIs("agentgate: unauthorized", 401)
	// ErrForbidden: 403, a credential without access to the resource
	// (QWED-AUTH-003, a suspended agent).
	ErrForbidden error = statusIs("agentgate: forbidden", 403)
	// ErrNotFound: 404 (QWED-AGENT-001, QWED-REQ-404).
	ErrNotFound error = statusIs("agentgate: not found", 404)
	// ErrConflict: 409, e.g. an Idempotency-Key reused with another
	// request (QWED-REQ-409).
	ErrConflict error = statusIs("agentgate: conflict", 409)
	// ErrRateLimited: 429 refusals (QWED-AUTH-004), after the retries.
	ErrRateLimited error = statusIs("agentgate: rate limited", 429)
	// ErrServer: 5xx, the gate unavailable (QWED-SYS-002, QWED-SYS-003)
	// or its deadline passed (QWED-ENG-003), after the retries.
	ErrServer error = &statusSentinel{msg: "agentgate: server error", match: func(s int) bool { return s >= 500 }}
)

// ErrAttemptTimeout is the cause of a *ConnectionError whose attempt
// outlived the client's timeout (WithTimeout) after the retries.
var ErrAttemptTimeout = errors.New("the attempt timed out")

// HasCode reports whether err is a refusal (an *APIError, or the Kafka
// client's *Error) carrying code.
func HasCode(err error, code domain.Code) bool { return ErrorCode(err) == code }

// ConnectionError is a call that got no answer from the gate: the
// connection failed, the attempt timed out (Err is ErrAttemptTimeout) or
// the context ended (Err is its error; errors.Is(err,
// context.DeadlineExceeded) holds). Route names the endpoint ("POST
// /agents/{id}/verify"; for Do, the path it was given, without its query);
// the URL's query and the credentials are never part of the error.
type ConnectionError struct {
	Route string
	Err   error
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("calling agentgate (%s): %v", e.Route, e.Err)
}

// Unwrap returns the cause.
func (e *ConnectionError) Unwrap() error { return e.Err }

// apiError decodes the refusal of a response with status >= 300 (a
// redirect, which the client does not follow, included).
func (r *response) apiError() *APIError {
	e := &APIError{Status: r.status, RequestID: r.requestID}
	if s := r.header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	var body struct {
		Error *struct {
			Code    domain.Code    `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e.Code, e.Message, e.Details = body.Error.Code, body.Error.Message, body.Error.Details
		return e
	}
	// Not the gate's error body (a proxy's page): the status speaks.
	e.Code = domain.CodeInternal
	if r.status >= 500 {
		e.Code = domain.CodeUnavailable
	}
	e.Message = fmt.Sprintf("the answer (%d %s) is not an agentgate error body", r.status, http.StatusText(r.status))
	return e
}
