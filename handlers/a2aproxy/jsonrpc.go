package a2aproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentgate/agentgate/domain/a2a"
)

// JSON-RPC 2.0 error codes the proxy answers. The codes of JSON-RPC itself
// and of A2A (-32001 to -32009) keep their meaning; the gate's own are in
// the implementation-defined server-error range, clear of A2A's.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	// CodeUnsupportedOperation is A2A's UnsupportedOperationError: an
	// A2A method the proxy does not forward.
	CodeUnsupportedOperation = -32004
	// CodeContentTypeNotSupported is A2A's ContentTypeNotSupportedError: a
	// file part, which the gate cannot verify.
	CodeContentTypeNotSupported = -32005
	// CodeNotForwarded: the gate decided a part and did not forward it
	// (blocked, rate_limited or error); data is the verdict, as
	// POST /a2a/intercept answers it.
	CodeNotForwarded = -32050
	// CodeRefused: the gate refused a part before deciding it (credentials,
	// a malformed AgentMessage, over size); data is the gate's error
	// {"code","message","details"}.
	CodeRefused = -32051
	// CodeUpstream: the message was allowed but the upstream agent did not
	// answer within the deadline, could not be reached, answered out of
	// bounds, or the outcome of an earlier attempt is unknown; data is the
	// gate's error {"code","message","details"}.
	CodeUpstream = -32052
)

// Limits of a proxied request.
const (
	// MaxParts bounds the parts of one message.
	MaxParts = 64
	// MaxMessageIDBytes bounds a message's messageId.
	MaxMessageIDBytes = 256
	// MaxDepth bounds the nesting of a request body.
	MaxDepth = 64
)

// The methods of A2A 1.0 and A2A 0.3 the proxy knows.
var (
	sendMethods   = map[string]bool{"SendMessage": true, "message/send": true}
	streamMethods = map[string]bool{"SendStreamingMessage": true, "message/stream": true}
	// otherMethods are the other methods of A2A: refused as unsupported
	// (they name tasks the gate cannot attribute to a tenant, or make the
	// upstream call addresses a request gives).
	otherMethods = setOf(
		"GetTask", "CancelTask", "ListTasks", "SubscribeToTask", "GetExtendedAgentCard",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
		"ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
		"tasks/get", "tasks/cancel", "tasks/resubscribe", "agent/getAuthenticatedExtendedCard",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
	)
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// retryAfter is the Retry-After header of a rate-limited verdict.
	retryAfter string
}

func rpcErrorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is a decoded JSON-RPC request to a proxied agent.
type request struct {
	// ID is the request's id as received ("null" when it could not be
	// read).
	ID     json.RawMessage
	Method string
	Stream bool
	// MessageID is the message's messageId; Sender the agent its metadata
	// names.
	MessageID string
	Sender    string
	Parts     []part
}

// part is one part of a message, as the AgentMessage it becomes.
type part struct {
	Type    a2a.PayloadType
	Payload json.RawMessage
}

var nullID = json.RawMessage("null")

// decodeRequest decodes a JSON-RPC request body. The body is forwarded as
// received, so it is held to what every JSON reader reads alike: one JSON
// value, no duplicate member names at any depth (readers differ on which
// one wins), nesting at most MaxDepth; members are matched exactly (never
// case-folded).
func decodeRequest(body []byte) (*request, *rpcError) {
	req := &request{ID: nullID}
	if err := checkJSON(body); err != nil {
		return req, rpcErrorf(CodeParseError, "the request is not one well-formed JSON value: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return req, rpcErrorf(CodeInvalidRequest, "the request is not a JSON-RPC request object (batches are not accepted)")
	}
	if id, ok := top["id"]; ok {
		if !validID(id) {
			return req, rpcErrorf(CodeInvalidRequest, "id must be a string, a number or null")
		}
		req.ID = id
	} else {
		return req, rpcErrorf(CodeInvalidRequest, "notifications (requests without an id) are not accepted: the sender must learn the verdict")
	}
	for k := range top {
		switch k {
		case "jsonrpc", "id", "method", "params":
		default:
			return req, rpcErrorf(CodeInvalidRequest, "unknown member %q", k)
		}
	}
	if v, ok := top["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return req, rpcErrorf(CodeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	if err := json.Unmarshal(top["method"], &req.Method); err != nil || req.Method == "" {
		return req, rpcErrorf(CodeInvalidRequest, "method must be a non-empty string")
	}
	switch {
	case sendMethods[req.Method]:
	case streamMethods[req.Method]:
		req.Stream = true
	case otherMethods[req.Method]:
		return req, rpcErrorf(CodeUnsupportedOperation, "the gate forwards only SendMessage and SendStreamingMessage (message/send, message/stream), not %s", req.Method)
	default:
		return req, rpcErrorf(CodeMethodNotFound, "method %q not found", truncate(req.Method, 64))
	}
	if e := req.decodeParams(top["params"]); e != nil {
		return req, e
	}
	return req, nil
}

// decodeParams decodes the params of a send: {"message": {...}, ...}.
func (req *request) decodeParams(raw json.RawMessage) *rpcError {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(raw, &params); err != nil || params == nil {
		return rpcErrorf(CodeInvalidParams, "params must be an object")
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(params["message"], &msg); err != nil || msg == nil {
		return rpcErrorf(CodeInvalidParams, "params.message must be an object")
	}
	// A2A 1.0's JSON readers take messageId, or else message_id.
	id, ok := msg["messageId"]
	if !ok {
		id = msg["message_id"]
	}
	if err := json.Unmarshal(id, &req.MessageID); err != nil || req.MessageID == "" || len(req.MessageID) > MaxMessageIDBytes {
		return rpcErrorf(CodeInvalidParams, "params.message.messageId must be a string of 1 to %d bytes", MaxMessageIDBytes)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(msg["metadata"], &meta); err != nil {
		return rpcErrorf(CodeInvalidParams, "params.message.metadata must be an object")
	}
	if err := json.Unmarshal(meta["sender_agent_id"], &req.Sender); err != nil || req.Sender == "" {
		return rpcErrorf(CodeInvalidParams, "params.message.metadata.sender_agent_id must name the sending agent")
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(msg["parts"], &parts); err != nil || len(parts) == 0 {
		return rpcErrorf(CodeInvalidParams, "params.message.parts must be a non-empty array of objects")
	}
	if len(parts) > MaxParts {
		return rpcErrorf(CodeInvalidParams, "a message has at most %d parts, this one %d", MaxParts, len(parts))
	}
	req.Parts = make([]part, len(parts))
	for i, p := range parts {
		if e := decodePart(p, &req.Parts[i]); e != nil {
			e.Message = fmt.Sprintf("params.message.parts[%d]: %s", i, e.Message)
			return e
		}
	}
	return nil
}

// decodePart decodes one part, of A2A 1.0 ({"text": ...}, {"data": ...})
// or A2A 0.3 ({"kind": "text", "text": ...}).
func decodePart(p map[string]json.RawMessage, out *part) *rpcError {
	if p == nil {
		return rpcErrorf(CodeInvalidParams, "a part must be an object")
	}
	var content string
	for _, k := range []string{"text", "data", "raw", "url", "file"} {
		if _, ok := p[k]; ok {
			if content != "" {
				return rpcErrorf(CodeInvalidParams, "a part has one content member, this one %s and %s", content, k)
			}
			content = k
		}
	}
	if kind, ok := p["kind"]; ok {
		var k string
		if err := json.Unmarshal(kind, &k); err != nil || (k != content && !(k == "file" && content != "")) {
			return rpcErrorf(CodeInvalidParams, "kind %s does not match the part's content %q", kind, content)
		}
	}
	var declared string
	if raw, ok := p["metadata"]; ok {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(raw, &meta); err != nil {
			return rpcErrorf(CodeInvalidParams, "metadata must be an object")
		}
		if t, ok := meta["payload_type"]; ok {
			if err := json.Unmarshal(t, &declared); err != nil || declared == "" {
				return rpcErrorf(CodeInvalidParams, "metadata.payload_type must be a payload type")
			}
		}
	}
	if content != "" && string(bytes.TrimSpace(p[content])) == "null" {
		return rpcErrorf(CodeInvalidParams, "%s must not be null", content)
	}
	switch content {
	case "text":
		var s string
		if err := json.Unmarshal(p["text"], &s); err != nil {
			return rpcErrorf(CodeInvalidParams, "text must be a string")
		}
		if declared != "" && declared != string(a2a.PayloadGeneral) {
			return rpcErrorf(CodeInvalidParams, "a text part is payload type general; declare %s on a data part", truncate(declared, 64))
		}
		payload, err := json.Marshal(struct {
			Text string `json:"text"`
		}{s})
		if err != nil {
			return rpcErrorf(CodeInvalidParams, "text cannot be encoded: %v", err)
		}
		*out = part{Type: a2a.PayloadGeneral, Payload: payload}
	case "data":
		data := bytes.TrimSpace(p["data"])
		if len(data) == 0 || data[0] != '{' {
			// A value that is not an object is carried as {"value": v}.
			data = append(append([]byte(`{"value":`), data...), '}')
		}
		out.Type, out.Payload = a2a.PayloadGeneral, data
		if declared != "" {
			out.Type = a2a.PayloadType(declared)
		}
	case "":
		return rpcErrorf(CodeInvalidParams, "a part needs one of text, data, raw, url, file")
	default:
		return rpcErrorf(CodeContentTypeNotSupported, "%s parts are not forwarded: the gate cannot verify what it cannot read", content)
	}
	return nil
}

// validID reports whether a JSON-RPC id is a string, a number or null.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	default:
		return string(id) == "null"
	}
}

// checkJSON checks that p is one JSON value with no duplicate member names
// at any depth and nesting at most MaxDepth.
func checkJSON(p []byte) error {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	// One frame per open object or array: the member names seen (objects),
	// and whether the next string token is a member name.
	type frame struct {
		names  map[string]struct{}
		object bool
		key    bool
	}
	var stack []frame
	values := 0 // top-level values begun
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if len(stack) == 0 {
			if values++; values > 1 {
				return errors.New("trailing data after the value")
			}
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = &stack[n-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return fmt.Errorf("nested deeper than %d", MaxDepth)
				}
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, frame{object: t == '{', key: t == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].key = true
				}
				continue
			}
		case string:
			if top != nil && top.object && top.key {
				if top.names == nil {
					top.names = map[string]struct{}{}
				}
				if _, dup := top.names[t]; dup {
					return fmt.Errorf("duplicate member %q", truncate(t, 64))
				}
				top.names[t] = struct{}{}
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true
		}
	}
	if values == 0 || len(stack) > 0 {
		return errors.New("unexpected end of the value")
	}
	return nil
}

// truncate bounds s for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
