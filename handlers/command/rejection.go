package command

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/agentgate/agentgate/domain"
)

// MaxEndpointBytes bounds the endpoint recorded with a rejection.
const MaxEndpointBytes = 256

// Rejection is a request refused before it became a command, with the
// status the HTTP API answers it with and the catalogue error. Every
// rejection of this package is recorded (RejectionCommand) by the
// transport before it is answered.
type Rejection struct {
	Status int
	Err    domain.Error
}

// Error implements the error interface with the code and message.
func (r *Rejection) Error() string { return string(r.Err.Code) + ": " + r.Err.Message }

// Body returns the error body {"error": {"code","message","details"}}.
func (r *Rejection) Body() []byte { return ErrorBody(r.Err) }

// Reject returns a rejection with the code's catalogue status and the
// message format, args.
func Reject(code domain.Code, details map[string]any, format string, args ...any) *Rejection {
	return &Rejection{
		Status: code.HTTPStatus(),
		Err:    domain.Error{Code: code, Message: fmt.Sprintf(format, args...), Details: details},
	}
}

// ErrorBody returns the encoded error body {"error": e}, details always
// present (domain.ReplyError).
func ErrorBody(e domain.Error) []byte {
	b, err := json.Marshal(domain.ErrorReply{Error: (*domain.ReplyError)(&e)})
	if err != nil {
		// Details hold only strings and integers; this cannot happen, but
		// the answer must still be a well-formed error body.
		b, _ = json.Marshal(domain.ErrorReply{Error: &domain.ReplyError{Code: e.Code, Message: e.Message}})
	}
	return b
}

// RejectionCommand returns the audit record of a refused request (a
// CmdRejectRequest command): the catalogue description of the code (the
// answered message may quote values of the body, which the log never
// holds), the details, the endpoint (at most MaxEndpointBytes), and the
// size and SHA-256 of the body, never the body. id and principal are the
// record's own: the transport chooses them.
func RejectionCommand(r *Rejection, endpoint string, body []byte, principal string, id domain.RequestID) *domain.Command {
	rec := domain.Error{Code: r.Err.Code, Message: r.Err.Code.Description(), Details: r.Err.Details}
	if len(endpoint) > MaxEndpointBytes {
		endpoint = endpoint[:MaxEndpointBytes]
	}
	rej := &domain.RejectRequest{Error: rec, Endpoint: endpoint, BodyBytes: int64(len(body))}
	if len(body) > 0 {
		d := sha256.Sum256(body)
		rej.BodyDigest = hex.EncodeToString(d[:])
	}
	return &domain.Command{Type: domain.CmdRejectRequest, Request: id, Principal: principal, Reject: rej}
}
