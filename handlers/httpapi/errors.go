package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/command"
)

// apiError is an error answered by this package: a catalogue error and
// the HTTP status to answer it with (the code's status unless overridden).
type apiError struct {
	status int
	err    domain.Error
	// record says whether the refusal is recorded in the log (a rejection
	// of the request) or not (a failure of the gate itself).
	record bool
}

// reject returns a recorded rejection with the code's catalogue status.
func reject(code domain.Code, details map[string]any, format string, args ...any) *apiError {
	return &apiError{
		status: code.HTTPStatus(),
		err:    domain.Error{Code: code, Message: fmt.Sprintf(format, args...), Details: details},
		record: true,
	}
}

// failure returns an unrecorded failure of the gate.
func failure(code domain.Code, format string, args ...any) *apiError {
	return &apiError{
		status: code.HTTPStatus(),
		err:    domain.Error{Code: code, Message: fmt.Sprintf(format, args...)},
	}
}

// rejected is the recorded rejection of a refusal of package command.
func rejected(r *command.Rejection) *apiError {
	return &apiError{status: r.Status, err: r.Err, record: true}
}

// body returns the encoded error body.
func (e *apiError) body() []byte { return command.ErrorBody(e.err) }

// writeJSON writes an encoded JSON body with its status, ended by a
// newline (as a terminal or a line-reading client expects).
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(withNewline(body))
}

// withNewline returns b ended by a newline.
func withNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return b
	}
	return append(b[:len(b):len(b)], '\n')
}

// writeValue encodes v and writes it with status.
func writeValue(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e := failure(domain.CodeInternal, "encoding the response: %v", err)
		writeJSON(w, e.status, e.body())
		return
	}
	writeJSON(w, status, b)
}
