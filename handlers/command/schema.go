package command

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/schemas"
)

// emptyObject stands for an empty body the endpoint reads as {}.
var emptyObject = []byte("{}")

// decoderKeywords are the schema keywords the strict check and the
// decoder already enforce on a command body: member names and closed
// objects (strictjson and DisallowUnknownFields), JSON types (decoding
// into the Go type, which TestSchemasAgreeWithGoTypes holds to the
// schema's), arrays, and null where a Go pointer takes it.
var decoderKeywords = []string{"$ref", "additionalProperties", "anyOf", "items", "properties", "type"}

// decodedDefs are the definitions of gate/defs.v1.json whose Go types
// decode with their own rules, at least as strict as the definition
// (domain.USD, TrustLevel, Risk, Limits, json.Number, Duration, time.Time).
var decodedDefs = []string{"Duration", "Limits", "Number", "Risk", "Time", "TrustLevel", "USD"}

// ownRules are the bodies whose decoder checks every rule of their
// schema itself (policy.Decode, and the change around it): like the
// bodies the strict check and the decoder cover, the server does not
// parse them a second time; FuzzCommandSchemas holds the claim.
var ownRules = []string{"policy", "policy-change"}

// bodySchema is the schema of one command body and whether the decoder
// leaves part of it unchecked (then every body is validated).
type bodySchema struct {
	schema *schemas.Schema
	// full is set when the schema asserts a keyword the decoder does not
	// check (an enum, a pattern, a length, a required member…).
	full bool
}

// endpoints are every command endpoint.
var endpoints = []*Endpoint{RegisterAgent, VerifyAction, VerifyToolCall, LogExecution, RequestTrust, SetTrustLevel,
	SuspendAgent, FileComplaint, PutToolRegistry, PutPrincipalPermissions, IssuePrincipalKey, RevokePrincipalKey, RotateToken, RevokeToken,
	Approve, Deny, ResolveApproval, A2AMessage, A2ABoundary, A2ATrust, A2AUntrust, A2ABlock, A2AUnblock,
	A2ABlockPair, A2AUnblockPair, PrepareExecute, Execute, CreateBusiness, UpdateBusiness, DeleteBusiness,
	WebhookCreate, WebhookUpdate, WebhookDelete, WebhookChange,
	CreatePolicy, UpdatePolicy, DeletePolicy, ChangePolicy}

// bodySchemas are the schemas of every endpoint's body, by name.
var bodySchemas = sync.OnceValue(func() map[string]bodySchema {
	out := map[string]bodySchema{}
	for _, ep := range endpoints {
		s, ok := schemas.CommandBody(ep.body)
		if !ok {
			panic("command: no schema for the command body " + ep.body) // TestSchemasAgreeWithGoTypes
		}
		full := false
		for _, k := range s.Keywords(decodedDefs...) {
			full = full || !slices.Contains(decoderKeywords, k)
		}
		out[ep.body] = bodySchema{schema: s, full: full && !slices.Contains(ownRules, ep.body)}
	}
	return out
})

// validateEveryBody makes checkBody validate every body, not only those
// whose schema asserts more than the decoder checks. The package's tests
// set it (TestMain), so every body they build is also held to its schema.
var validateEveryBody = false

// checkBody validates a command body the endpoint has already decoded
// against the body's schema. It runs after the decoder and the field
// limits, so that every body they refuse keeps its code and message; and
// only where the schema asserts something the decoder does not check
// (bodySchema.full): elsewhere the strict check and the decoder have
// already enforced all of it, and a second parse would cost every
// request (docs/ARCHITECTURE.md, "Command and event schemas").
func checkBody(name string, body []byte) *Rejection {
	b, ok := bodySchemas()[name]
	if !ok {
		return &Rejection{Status: http.StatusInternalServerError,
			Err: domain.Error{Code: domain.CodeInternal, Message: "no schema for the body " + name}}
	}
	if !b.full && !validateEveryBody {
		return nil
	}
	return validateBody(b.schema, body)
}

// validateBody validates body against s: a body s refuses is refused with
// QWED-REQ-001 naming the first violation (sorted) in details: {"field",
// "reason": "schema", "keyword"}. An empty body stands for {}.
func validateBody(s *schemas.Schema, body []byte) *Rejection {
	if len(bytes.TrimSpace(body)) == 0 {
		body = emptyObject
	}
	doc, err := schemas.Decode(body)
	if err != nil {
		return Reject(domain.CodeInvalidRequest, nil, "invalid request: %s", Clip(err.Error()))
	}
	vs := s.Validate(doc)
	if len(vs) == 0 {
		return nil
	}
	v := vs[0]
	field := memberPath(doc, v.InstanceLocation)
	return Reject(domain.CodeInvalidRequest, map[string]any{"field": field, "reason": "schema", "keyword": v.Keyword},
		"%s does not match the schema of the body: %s", Clip(field), Clip(v.Message))
}

// memberPath renders a JSON pointer into doc as the API names members:
// names joined by ".", array elements as "[i]" ("tools[2].name"); "(body)"
// for the document itself.
func memberPath(doc any, pointer string) string {
	if pointer == "" {
		return "(body)"
	}
	var sb strings.Builder
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := doc.(type) {
		case []any:
			i, _ := strconv.Atoi(tok)
			sb.WriteString("[" + tok + "]")
			if i >= 0 && i < len(v) {
				doc = v[i]
			}
			continue
		case map[string]any:
			doc = v[tok]
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}
