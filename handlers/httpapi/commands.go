package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/domain/strictjson"
)

// Secret prefixes (seed 000 §3.2).
const (
	agentTokenPrefix = "qwed_agent_"
	apiKeyPrefix     = "qwed_key_"
)

// authMode says which credentials an endpoint takes.
type authMode int

const (
	// authPrincipal needs a valid X-API-Key.
	authPrincipal authMode = iota
	// authAgent takes the agent token (body or Bearer) or an X-API-Key.
	authAgent
)

// input is what a command is built from: the JSON body (HTTP body or
// CloudEvent data) and the identifiers of the path (or the CloudEvent
// subject).
type input struct {
	body        []byte
	agentID     string
	tool        string
	approvalID  string
	principalID string
	keyID       string
}

// minted is a secret minted for a command: only its hash is in the
// command; the plaintext is answered once, to the request that minted it.
type minted struct {
	field string // reply member: "agent_token" or "api_key"
	value string
	hash  string
}

// endpoint describes one command endpoint.
type endpoint struct {
	auth authMode
	// build decodes in into a command (Request, Principal and TokenHash
	// are set by the caller); an agent token found in the body is hashed
	// into cr.
	build func(in *input, cr *creds) (*domain.Command, *minted, *apiError)
}

// command builds the command of in (ep.build) and refuses it when a field
// is over its limit (domain.CheckBounds): QWED-REQ-004 naming the field,
// with status 400, as the QWED protocol answers a query over its limit
// (the catalogue's 413 is for a body over the transport's byte limit).
// Every transport builds its commands here, so HTTP, POST /events and
// Kafka refuse the same fields.
func (ep *endpoint) command(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	cmd, mint, e := ep.build(in, cr)
	if e != nil {
		return nil, nil, e
	}
	if err := domain.CheckBounds(cmd); err != nil {
		return nil, nil, &apiError{status: http.StatusBadRequest, err: *err, record: true}
	}
	return cmd, mint, nil
}

// pathIDs extract the path identifiers of a route.
type pathIDs func(r *http.Request) (input, *apiError)

func pathValue(r *http.Request, name string) (string, *apiError) {
	v := r.PathValue(name)
	if len(v) > MaxPathIDBytes {
		return "", reject(domain.CodeInvalidRequest, map[string]any{"field": name, "max_bytes": MaxPathIDBytes},
			"path identifier %s is longer than %d bytes", name, MaxPathIDBytes)
	}
	return v, nil
}

func agentPath(r *http.Request) (input, *apiError) {
	id, e := pathValue(r, "id")
	if e != nil {
		return input{}, e
	}
	tool, e := pathValue(r, "tool")
	return input{agentID: id, tool: tool}, e
}

func principalPath(r *http.Request) (input, *apiError) {
	id, e := pathValue(r, "id")
	return input{principalID: id}, e
}

func principalKeyPath(r *http.Request) (input, *apiError) {
	id, e := pathValue(r, "id")
	if e != nil {
		return input{}, e
	}
	key, e := pathValue(r, "key_id")
	return input{principalID: id, keyID: key}, e
}

func approvalPath(r *http.Request) (input, *apiError) {
	id, e := pathValue(r, "id")
	return input{approvalID: id}, e
}

// command returns the handler of a command endpoint.
func (a *api) command(ep *endpoint, ids pathIDs) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		c := newCall(r)
		buf := a.getBuf()
		defer a.putBuf(buf)
		e := readBody(w, r, a.cfg.MaxBodyBytes, buf)
		c.body = buf.Bytes()
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		id, e := requestID(r)
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		c.creds, e = a.credentials(r, ep.auth == authPrincipal, ep.auth == authAgent)
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		var in input
		if ids != nil {
			if in, e = ids(r); e != nil {
				a.fail(ctx, w, c, e)
				return
			}
		}
		in.body = c.body
		status, body, e := a.run(ctx, ep, &in, c, id)
		if e != nil {
			a.fail(ctx, w, c, e)
			return
		}
		writeJSON(w, status, body)
	}
}

// run builds the command of ep, submits it and renders its answer.
func (a *api) run(ctx context.Context, ep *endpoint, in *input, c *call, id domain.RequestID) (int, []byte, *apiError) {
	cmd, mint, e := ep.command(in, &c.creds)
	if e != nil {
		return 0, nil, e
	}
	if ep.auth == authAgent && c.creds.principal == "" && c.creds.tokenHash == "" {
		return 0, nil, reject(domain.CodeInvalidAgentToken, nil,
			"missing agent token: send agent_token in the body, an Authorization: Bearer header, or an X-API-Key")
	}
	cmd.Request = id
	cmd.Request.Scope = domain.RequestScope(c.creds.principal, c.creds.tokenHash)
	cmd.Principal = c.creds.principal
	cmd.TokenHash = c.creds.tokenHash
	ev, e := a.submit(ctx, cmd)
	if e != nil {
		return 0, nil, e
	}
	if !sameRequest(cmd, ev.Command) {
		return 0, nil, reject(domain.CodeConflict, map[string]any{"request_id": id.ID},
			"the request id %q was already used by a different request", id.ID)
	}
	if ev.Type != domain.EvCommandRejected {
		markDecided(ctx)
	}
	a.m.decision(ev)
	status, body, err := render(ev, mint)
	if err != nil {
		a.log.Error("rendering the reply", "type", ev.Type, "seq", ev.Seq, "err", err)
		return 0, nil, failure(domain.CodeInternal, "the decision was recorded at seq %d but could not be rendered", ev.Seq)
	}
	return status, body, nil
}

// requestID returns the RequestID of an HTTP command.
func requestID(r *http.Request) (domain.RequestID, *apiError) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > MaxIdempotencyKeyBytes {
		return domain.RequestID{}, reject(domain.CodeInvalidRequest,
			map[string]any{"header": "Idempotency-Key", "max_bytes": MaxIdempotencyKeyBytes},
			"Idempotency-Key is longer than %d bytes", MaxIdempotencyKeyBytes)
	}
	if key == "" {
		key = freshID()
	}
	return domain.RequestID{Source: HTTPSource, ID: key}, nil
}

// freshID returns a random request id.
func freshID() string { return "req_" + rand.Text() }

// mint returns a new secret with prefix: 32 random bytes, base64url.
func mint(field, prefix string) *minted {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	v := prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return &minted{field: field, value: v, hash: hashHex(v)}
}

// sameRequest reports whether the recorded command is the one submitted:
// the same command type, credentials, target and payload (minted secrets
// aside). A mismatch means the request id was reused by another request,
// whose answer must not be disclosed.
func sameRequest(mine, rec *domain.Command) bool {
	if rec == mine {
		return true
	}
	if rec == nil || rec.Type != mine.Type || rec.Principal != mine.Principal || rec.AgentID != mine.AgentID ||
		subtleNotEqual(rec.TokenHash, mine.TokenHash) {
		return false
	}
	if rec.Withheld != nil {
		// Refused at authentication: the record holds the payload's
		// digest and size, not the payload.
		w := domain.Withhold(mine)
		return w.Withheld != nil && *w.Withheld == *rec.Withheld
	}
	m := *mine
	m.Request = rec.Request
	// The engine verdict is the gate's, not the request's: a retry may
	// get another (a timeout) and is still the same request.
	m.Verdict = rec.Verdict
	if m.Register != nil && rec.Register != nil {
		reg := *m.Register
		reg.TokenHash = rec.Register.TokenHash
		m.Register = &reg
	}
	if m.IssueKey != nil && rec.IssueKey != nil {
		k := *m.IssueKey
		k.KeyHash, k.KeyID = rec.IssueKey.KeyHash, rec.IssueKey.KeyID
		m.IssueKey = &k
	}
	if m.Type == domain.CmdRotateAgentToken && m.NewToken != nil && rec.NewToken != nil {
		m.NewToken = rec.NewToken
	}
	x, err1 := json.Marshal(&m)
	y, err2 := json.Marshal(rec)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func subtleNotEqual(a, b string) bool {
	if a == "" || b == "" {
		return a != b
	}
	return !equalHash(a, b)
}

// keyIssued is the answer of POST /principals/{id}/keys.
type keyIssued struct {
	PrincipalID string `json:"principal_id"`
	KeyID       string `json:"key_id"`
	// Replaces is the key a rotation revoked.
	Replaces string `json:"replaces,omitempty"`
	// APIKey is present only in the answer to the request that minted it.
	APIKey string `json:"api_key,omitempty"`
}

// render encodes the reply of ev, adding a minted secret to the answer of
// the request that minted it (a retry gets the reply without it).
func render(ev *domain.Event, m *minted) (int, []byte, error) {
	if ev.Type == domain.EvPrincipalKeyIssued && ev.KeyIssued != nil {
		k := keyIssued{PrincipalID: ev.KeyIssued.PrincipalID, KeyID: ev.KeyIssued.KeyID, Replaces: ev.KeyIssued.Replaces}
		if m != nil && equalHash(m.hash, ev.KeyIssued.KeyHash) {
			k.APIKey = m.value
		}
		b, err := json.Marshal(k)
		return http.StatusCreated, b, err
	}
	status, body := domain.Reply(ev)
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	if m != nil && ev.Type == domain.EvAgentRegistered && ev.Registered != nil && equalHash(m.hash, ev.Registered.TokenHash) {
		b = addMember(b, m.field, m.value)
	}
	if m != nil && ev.Type == domain.EvAgentTokenRotated && ev.TokenChanged != nil && equalHash(m.hash, ev.TokenChanged.TokenHash) {
		b = addMember(b, m.field, m.value)
	}
	return status, b, nil
}

// addMember appends "name": value to the encoded JSON object obj.
func addMember(obj []byte, name, value string) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return obj
	}
	out := make([]byte, 0, len(obj)+len(name)+len(value)+8)
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	out = strconv.AppendQuote(append(strconv.AppendQuote(out, name), ':'), value)
	return append(out, '}')
}

// agentFields are the members of seed 000 §4.1 that identify and
// authenticate the agent in the body: accepted and stripped.
type agentFields struct {
	AgentID    string `json:"agent_id,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
}

// apply checks agent_id against the path (or the CloudEvent subject; a
// CloudEvent without a subject takes the agent from agent_id) and hashes
// agent_token into cr.
func (f *agentFields) apply(in *input, cr *creds) *apiError {
	if in.agentID == "" {
		in.agentID = f.AgentID
	}
	if f.AgentID != "" && f.AgentID != in.agentID {
		return reject(domain.CodeInvalidRequest, map[string]any{"field": "agent_id"},
			"agent_id in the body does not match the agent of the request")
	}
	if f.AgentToken != "" {
		h := hashHex(f.AgentToken)
		if cr.tokenHash != "" && !equalHash(cr.tokenHash, h) {
			return reject(domain.CodeInvalidRequest, map[string]any{"field": "agent_token"},
				"agent_token in the body and the Bearer token differ")
		}
		cr.tokenHash = h
	}
	return nil
}

var stepNumber = decodeOptions{numberCode: domain.CodeInvalidStepNumber, numberField: "context.step_number"}

// registerBody is the body of POST /agents/register (seed 000 §3.1): the
// RegisterAgent command without token_hash, which only the gate mints.
type registerBody struct {
	Agent       domain.AgentInfo   `json:"agent"`
	Permissions domain.Permissions `json:"permissions"`
	Budget      domain.Limits      `json:"budget"`
	TrustLevel  *domain.TrustLevel `json:"trust_level,omitempty"`
}

var epRegister = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b registerBody
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	tok := mint("agent_token", agentTokenPrefix)
	return &domain.Command{Type: domain.CmdRegisterAgent, Register: &domain.RegisterAgent{
		Agent: b.Agent, Permissions: b.Permissions, Budget: b.Budget, TrustLevel: b.TrustLevel, TokenHash: tok.hash,
	}}, tok, nil
}}

// verifyBody is the body of POST /agents/{id}/verify (seed 000 §4.1).
type verifyBody struct {
	domain.VerifyAction
	agentFields
}

var epVerify = endpoint{auth: authAgent, build: func(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	cmd, e := decodeVerify(in, cr)
	return cmd, nil, e
}}

var verifyShape = strictjson.ShapeOf(reflect.TypeFor[verifyBody](), true)

// decodeVerify builds the VerifyAction command of a verify request.
func decodeVerify(in *input, cr *creds) (*domain.Command, *apiError) {
	var b verifyBody
	if e := strict(in.body, verifyShape); e != nil {
		return nil, e
	}
	// The fast path decodes what decodeJSON would decode to the same
	// members; anything else (and every error) takes decodeJSON.
	var fast bool
	if b.AgentID, b.AgentToken, fast = eventjson.DecodeVerifyRequest(in.body, &b.VerifyAction); !fast {
		b = verifyBody{}
		if e := decodeJSON(in.body, &b, stepNumber); e != nil {
			return nil, e
		}
	}
	if e := b.apply(in, cr); e != nil {
		return nil, e
	}
	return &domain.Command{Type: domain.CmdVerifyAction, AgentID: in.agentID, Verify: &b.VerifyAction}, nil
}

// toolBody is the body of POST /agents/{id}/tools/{tool} (seed 000 §5.1).
type toolBody struct {
	domain.VerifyToolCall
	agentFields
}

var epTool = endpoint{auth: authAgent, build: func(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	var b toolBody
	if e := decodeJSON(in.body, &b, stepNumber); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	switch name := b.ToolCall.ToolName; {
	case name == "":
		b.ToolCall.ToolName = in.tool
	case in.tool != "" && name != in.tool:
		return nil, nil, reject(domain.CodeInvalidRequest, map[string]any{"field": "tool_call.tool_name"},
			"tool_call.tool_name %q does not match the tool %q of the path", clip(name), clip(in.tool))
	}
	return &domain.Command{Type: domain.CmdVerifyToolCall, AgentID: in.agentID, Tool: &b.VerifyToolCall}, nil, nil
}}

// executionBody is the body of POST /agents/{id}/executions.
type executionBody struct {
	domain.LogExecution
	agentFields
}

var epExecution = endpoint{auth: authAgent, build: func(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	var b executionBody
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdLogExecution, AgentID: in.agentID, Execution: &b.LogExecution}, nil, nil
}}

// trustBody is the body of POST /agents/{id}/trust (seed 000 §8.2).
type trustBody struct {
	domain.RequestTrustElevation
	agentFields
}

var epTrust = endpoint{auth: authAgent, build: func(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	var b trustBody
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRequestTrust, AgentID: in.agentID, Trust: &b.RequestTrustElevation}, nil, nil
}}

// missing is the rejection of an absent required member.
func missing(field string) *apiError {
	return reject(domain.CodeMissingField, map[string]any{"field": field}, "missing required member %s", field)
}

var epSetTrust = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b struct {
		Level  *domain.TrustLevel `json:"trust_level"`
		Reason string             `json:"reason"`
	}
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.Level == nil {
		return nil, nil, missing("trust_level")
	}
	return &domain.Command{Type: domain.CmdSetTrustLevel, AgentID: in.agentID,
		SetTrust: &domain.SetTrustLevel{Level: *b.Level, Reason: b.Reason}}, nil, nil
}}

var epSuspend = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b struct {
		Suspended *bool  `json:"suspended"`
		Reason    string `json:"reason"`
	}
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.Suspended == nil {
		return nil, nil, missing("suspended")
	}
	return &domain.Command{Type: domain.CmdSuspendAgent, AgentID: in.agentID,
		Suspend: &domain.SuspendAgent{Suspended: *b.Suspended, Reason: b.Reason}}, nil, nil
}}

var epComplaint = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b domain.FileComplaint
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdFileComplaint, AgentID: in.agentID, Complaint: &b}, nil, nil
}}

var epToolRegistry = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b domain.PutToolRegistry
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.PrincipalID != "" && b.PrincipalID != in.principalID {
		return nil, nil, reject(domain.CodeInvalidRequest, map[string]any{"field": "principal_id"},
			"principal_id in the body does not match the principal of the path")
	}
	b.PrincipalID = in.principalID
	return &domain.Command{Type: domain.CmdPutToolRegistry, ToolRegistry: &b}, nil, nil
}}

var epIssueKey = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b struct{}
	if e := decodeJSON(in.body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	key, id := newAPIKey()
	return &domain.Command{Type: domain.CmdIssuePrincipalKey, IssueKey: &domain.IssuePrincipalKey{
		PrincipalID: in.principalID, KeyHash: key.hash, KeyID: id, Replaces: in.keyID,
	}}, key, nil
}}

// newAPIKey mints a principal API key and its random ID.
func newAPIKey() (*minted, string) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return mint("api_key", apiKeyPrefix), "key_" + hex.EncodeToString(id[:])
}

// epRevokeKey revokes a principal API key: DELETE
// /principals/{id}/keys/{key_id}.
var epRevokeKey = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b struct{}
	if e := decodeJSON(in.body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRevokePrincipalKey, RevokeKey: &domain.IssuePrincipalKey{
		PrincipalID: in.principalID, KeyID: in.keyID,
	}}, nil, nil
}}

// epRotateToken mints a new token for an agent (the agent itself, with
// its current token, or its principal): POST /agents/{id}/token/rotate,
// qwed.agent.token.rotate. The old token stops working at once; the new
// one is in this answer only.
var epRotateToken = endpoint{auth: authAgent, build: func(in *input, cr *creds) (*domain.Command, *minted, *apiError) {
	var b agentFields
	if e := decodeJSON(in.body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	tok := mint("agent_token", agentTokenPrefix)
	return &domain.Command{Type: domain.CmdRotateAgentToken, AgentID: in.agentID,
		NewToken: &domain.AgentTokenChange{TokenHash: tok.hash}}, tok, nil
}}

// epRevokeToken revokes an agent's token (its principal or the admin):
// DELETE /agents/{id}/token, qwed.agent.token.revoke. The agent is refused
// until its principal rotates a new token.
var epRevokeToken = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b struct{}
	if e := decodeJSON(in.body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRevokeAgentToken, AgentID: in.agentID,
		NewToken: &domain.AgentTokenChange{}}, nil, nil
}}

// resolveBody is the body of POST /approvals/{id}/approve and /deny.
type resolveBody struct {
	Reason string `json:"reason"`
}

func resolveEndpoint(approve bool) endpoint {
	return endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
		var b resolveBody
		if e := decodeJSON(in.body, &b, decodeOptions{emptyOK: true}); e != nil {
			return nil, nil, e
		}
		return &domain.Command{Type: domain.CmdResolveApproval, Resolve: &domain.ResolveApproval{
			ApprovalID: in.approvalID, Approve: approve, Reason: b.Reason,
		}}, nil, nil
	}}
}

var (
	epApprove = resolveEndpoint(true)
	epDeny    = resolveEndpoint(false)
)

// epResolveEvent is qwed.approval.resolve: data {approval_id, approve, reason}.
var epResolveEvent = endpoint{auth: authPrincipal, build: func(in *input, _ *creds) (*domain.Command, *minted, *apiError) {
	var b domain.ResolveApproval
	if e := decodeJSON(in.body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.ApprovalID == "" {
		return nil, nil, missing("approval_id")
	}
	return &domain.Command{Type: domain.CmdResolveApproval, Resolve: &b}, nil, nil
}}
