package command

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/eventjson"
	"github.com/agentgate/agentgate/domain/strictjson"
)

// Auth says which credentials an endpoint takes.
type Auth int

const (
	// AuthPrincipal needs a valid API key (X-API-Key).
	AuthPrincipal Auth = iota
	// AuthAgent takes the agent token (in the body, or outside it: a
	// Bearer token) or an API key.
	AuthAgent
)

// Input is what a command is built from: the JSON body (HTTP body or
// CloudEvent data) and the identifiers of the path (or the CloudEvent
// subject).
type Input struct {
	Body        []byte
	AgentID     string
	Tool        string
	ApprovalID  string
	PrincipalID string
	KeyID       string
	// MaxPayload bounds an AgentMessage's payload (A2AMessage): the
	// gate's max_payload_size_bytes; 0 for a2a.DefaultMaxPayloadBytes.
	MaxPayload int
	// BusinessID is the business of the path (PUT and DELETE
	// /businesses/{id}).
	BusinessID string
	// ConfirmationToken is an execute's X-Confirmation-Token (the Agent
	// Policy Engine spec §2.2), "" when absent; only its hash enters the
	// command.
	ConfirmationToken string
	// PolicyID is the policy of the path (PUT and DELETE /policies/{id}).
	PolicyID string
	// ExecuteMode is the gate's execute mode (domain.ExecuteConfig.Mode):
	// in confirm and strict an execute body that does not decode is one
	// of §2.4's refusals (decodeExecute); "" stands for open.
	ExecuteMode string
	// WebhookID is the webhook of PUT and DELETE /webhooks/{id}.
	WebhookID string
	// Consumer is the consumer the admin key names (?consumer=) in a
	// webhook or policy change (webhooks.go, policies.go).
	Consumer string
}

// Credentials are the credentials a request presented, verified or
// hashed.
type Credentials struct {
	// Principal is the principal of a valid API key (AdminPrincipal for
	// the admin key), "" when none was presented.
	Principal string
	// TokenHash is the SHA-256 hex of the agent token presented, "" when
	// none was.
	TokenHash string
}

// minted is a secret minted for a command: only its hash is in the
// command; the plaintext is answered once, to the request that minted it.
type minted struct {
	field string // reply member: "agent_token" or "api_key"
	value string
	hash  string
}

// Endpoint is one command endpoint: the shape of its body and the
// credentials it takes. The endpoints are the package's variables
// (RegisterAgent, VerifyAction, ...); a transport builds their commands
// with Transport.Build.
type Endpoint struct {
	auth Auth
	// body names the schema of the JSON body (schemas.CommandBody).
	body string
	// build decodes in into a command (Request, Principal and TokenHash
	// are set by Build); an agent token found in the body is hashed into
	// cr.
	build func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection)
}

// Auth returns the credentials the endpoint takes.
func (ep *Endpoint) Auth() Auth { return ep.auth }

// mint returns a new secret with prefix, answered in member field.
func mint(field, prefix string) *minted {
	v := NewSecret(prefix)
	return &minted{field: field, value: v, hash: HashSecret(v)}
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
	// So is where a principal-wide command was decided (Kafka: on
	// partition 0 for every partition, domain.Command.Global).
	m.Global = rec.Global
	// And the agent it authenticated where the agent lives (Kafka: an
	// execute decided on its consumer's home partition).
	m.Authenticated = rec.Authenticated
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
	if m.Type == domain.CmdPrepareExecute && m.Execute != nil && rec.Execute != nil {
		x := *m.Execute
		x.TokenHash = rec.Execute.TokenHash
		m.Execute = &x
	}
	x, err1 := json.Marshal(&m)
	y, err2 := json.Marshal(rec)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func subtleNotEqual(a, b string) bool {
	if a == "" || b == "" {
		return a != b
	}
	return !EqualHash(a, b)
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
		if m != nil && EqualHash(m.hash, ev.KeyIssued.KeyHash) {
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
	if m != nil && ev.Type == domain.EvAgentRegistered && ev.Registered != nil && EqualHash(m.hash, ev.Registered.TokenHash) {
		b = addMember(b, m.field, m.value)
	}
	if m != nil && ev.Type == domain.EvAgentTokenRotated && ev.TokenChanged != nil && EqualHash(m.hash, ev.TokenChanged.TokenHash) {
		b = addMember(b, m.field, m.value)
	}
	if m != nil && ev.Type == domain.EvExecutePrepared && ev.Prepared != nil && EqualHash(m.hash, ev.Prepared.TokenHash) {
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

// agentFields are the members of the QWED-Agent spec v1.1 §4.1 that identify and
// authenticate the agent in the body: accepted and stripped.
type agentFields struct {
	AgentID    string `json:"agent_id,omitempty"`
	AgentToken string `json:"agent_token,omitempty"`
}

// apply checks agent_id against the path (or the CloudEvent subject; a
// CloudEvent without a subject takes the agent from agent_id) and hashes
// agent_token into cr.
func (f *agentFields) apply(in *Input, cr *Credentials) *Rejection {
	if in.AgentID == "" {
		in.AgentID = f.AgentID
	}
	if f.AgentID != "" && f.AgentID != in.AgentID {
		return Reject(domain.CodeInvalidRequest, map[string]any{"field": "agent_id"},
			"agent_id in the body does not match the agent of the request")
	}
	if f.AgentToken != "" {
		h := HashSecret(f.AgentToken)
		if cr.TokenHash != "" && !EqualHash(cr.TokenHash, h) {
			return Reject(domain.CodeInvalidRequest, map[string]any{"field": "agent_token"},
				"agent_token in the body and the Bearer token differ")
		}
		cr.TokenHash = h
	}
	return nil
}

var stepNumber = decodeOptions{numberCode: domain.CodeInvalidStepNumber, numberField: "context.step_number"}

// registerBody is the body of POST /agents/register (QWED-Agent spec v1.1 §3.1): the
// RegisterAgent command without token_hash, which only the gate mints.
type registerBody struct {
	Agent       domain.AgentInfo   `json:"agent"`
	Permissions domain.Permissions `json:"permissions"`
	Budget      domain.Limits      `json:"budget"`
	TrustLevel  *domain.TrustLevel `json:"trust_level,omitempty"`
}

// RegisterAgent is POST /agents/register and qwed.agent.register: it
// mints the agent token (answered once, recorded as its hash).
var RegisterAgent = &Endpoint{auth: AuthPrincipal, body: "register", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b registerBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	tok := mint("agent_token", AgentTokenPrefix)
	return &domain.Command{Type: domain.CmdRegisterAgent, Register: &domain.RegisterAgent{
		Agent: b.Agent, Permissions: b.Permissions, Budget: b.Budget, TrustLevel: b.TrustLevel, TokenHash: tok.hash,
	}}, tok, nil
}}

// verifyBody is the body of POST /agents/{id}/verify (QWED-Agent spec v1.1 §4.1).
type verifyBody struct {
	domain.VerifyAction
	agentFields
}

// VerifyAction is POST /agents/{id}/verify and qwed.agent.action.verify.
var VerifyAction = &Endpoint{auth: AuthAgent, body: "action-verify", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	cmd, e := decodeVerify(in, cr)
	return cmd, nil, e
}}

var verifyShape = strictjson.ShapeOf(reflect.TypeFor[verifyBody](), true)

// decodeVerify builds the VerifyAction command of a verify request.
func decodeVerify(in *Input, cr *Credentials) (*domain.Command, *Rejection) {
	var b verifyBody
	if e := strict(in.Body, verifyShape); e != nil {
		return nil, e
	}
	// The fast path decodes what decodeJSON would decode to the same
	// members; anything else (and every error) takes decodeJSON.
	var fast bool
	if b.AgentID, b.AgentToken, fast = eventjson.DecodeVerifyRequest(in.Body, &b.VerifyAction); !fast {
		b = verifyBody{}
		if e := decodeJSON(in.Body, &b, stepNumber); e != nil {
			return nil, e
		}
	}
	if e := b.apply(in, cr); e != nil {
		return nil, e
	}
	return &domain.Command{Type: domain.CmdVerifyAction, AgentID: in.AgentID, Verify: &b.VerifyAction}, nil
}

// toolBody is the body of POST /agents/{id}/tools/{tool} (QWED-Agent spec v1.1 §5.1).
type toolBody struct {
	domain.VerifyToolCall
	agentFields
}

// VerifyToolCall is POST /agents/{id}/tools/{tool} and
// qwed.agent.tool.verify; tool_call.tool_name defaults to the path's tool.
var VerifyToolCall = &Endpoint{auth: AuthAgent, body: "tool-verify", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	var b toolBody
	if e := decodeJSON(in.Body, &b, stepNumber); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	switch name := b.ToolCall.ToolName; {
	case name == "":
		b.ToolCall.ToolName = in.Tool
	case in.Tool != "" && name != in.Tool:
		return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "tool_call.tool_name"},
			"tool_call.tool_name %q does not match the tool %q of the path", Clip(name), Clip(in.Tool))
	}
	return &domain.Command{Type: domain.CmdVerifyToolCall, AgentID: in.AgentID, Tool: &b.VerifyToolCall}, nil, nil
}}

// executionBody is the body of POST /agents/{id}/executions.
type executionBody struct {
	domain.LogExecution
	agentFields
	// Output is the output the action produced, at most
	// domain.MaxOutputBytes: the command records its scan
	// (domain.ScanOutput), never the text.
	Output string `json:"output,omitempty"`
}

// LogExecution is POST /agents/{id}/executions and
// qwed.agent.execution.log.
var LogExecution = &Endpoint{auth: AuthAgent, body: "execution-log", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	var b executionBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	cmd := &domain.Command{Type: domain.CmdLogExecution, AgentID: in.AgentID, Execution: &b.LogExecution}
	if b.Output != "" {
		if n := len(b.Output); n > domain.MaxOutputBytes {
			// As CheckBounds answers a field over its limit.
			return nil, nil, &Rejection{Status: http.StatusBadRequest, Err: *domain.TooLong("output", n, domain.MaxOutputBytes)}
		}
		cmd.OutputScan = domain.ScanOutput(b.Output)
	}
	return cmd, nil, nil
}}

// trustBody is the body of POST /agents/{id}/trust (QWED-Agent spec v1.1 §8.2).
type trustBody struct {
	domain.RequestTrustElevation
	agentFields
}

// RequestTrust is POST /agents/{id}/trust and qwed.agent.trust.request.
var RequestTrust = &Endpoint{auth: AuthAgent, body: "trust-request", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	var b trustBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRequestTrust, AgentID: in.AgentID, Trust: &b.RequestTrustElevation}, nil, nil
}}

// missing is the rejection of an absent required member.
func missing(field string) *Rejection {
	return Reject(domain.CodeMissingField, map[string]any{"field": field}, "missing required member %s", field)
}

// setTrustBody is the body of POST /agents/{id}/trust-level.
type setTrustBody struct {
	Level  *domain.TrustLevel `json:"trust_level"`
	Reason string             `json:"reason"`
}

// SetTrustLevel is POST /agents/{id}/trust-level.
var SetTrustLevel = &Endpoint{auth: AuthPrincipal, body: "trust-set", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b setTrustBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.Level == nil {
		return nil, nil, missing("trust_level")
	}
	return &domain.Command{Type: domain.CmdSetTrustLevel, AgentID: in.AgentID,
		SetTrust: &domain.SetTrustLevel{Level: *b.Level, Reason: b.Reason}}, nil, nil
}}

// suspendBody is the body of POST /agents/{id}/suspend.
type suspendBody struct {
	Suspended *bool  `json:"suspended"`
	Reason    string `json:"reason"`
}

// SuspendAgent is POST /agents/{id}/suspend.
var SuspendAgent = &Endpoint{auth: AuthPrincipal, body: "suspend", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b suspendBody
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.Suspended == nil {
		return nil, nil, missing("suspended")
	}
	return &domain.Command{Type: domain.CmdSuspendAgent, AgentID: in.AgentID,
		Suspend: &domain.SuspendAgent{Suspended: *b.Suspended, Reason: b.Reason}}, nil, nil
}}

// FileComplaint is POST /agents/{id}/complaints.
var FileComplaint = &Endpoint{auth: AuthPrincipal, body: "complaint", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b domain.FileComplaint
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdFileComplaint, AgentID: in.AgentID, Complaint: &b}, nil, nil
}}

// PutToolRegistry is PUT /principals/{id}/tools.
var PutToolRegistry = &Endpoint{auth: AuthPrincipal, body: "tools-put", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b domain.PutToolRegistry
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.PrincipalID != "" && b.PrincipalID != in.PrincipalID {
		return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "principal_id"},
			"principal_id in the body does not match the principal of the path")
	}
	b.PrincipalID = in.PrincipalID
	return &domain.Command{Type: domain.CmdPutToolRegistry, ToolRegistry: &b}, nil, nil
}}

// PutPrincipalPermissions is PUT /principals/{id}/permissions: the
// principal's default path and egress policy for all its agents
// (domain/principalperms.go). The principal's key (or the admin key)
// sets it; an agent token cannot.
var PutPrincipalPermissions = &Endpoint{auth: AuthPrincipal, body: "permissions-put", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b domain.PrincipalPermissions
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.PrincipalID != "" && b.PrincipalID != in.PrincipalID {
		return nil, nil, Reject(domain.CodeInvalidRequest, map[string]any{"field": "principal_id"},
			"principal_id in the body does not match the principal of the path")
	}
	b.PrincipalID = in.PrincipalID
	return &domain.Command{Type: domain.CmdPutPrincipalPermissions, PrincipalPermissions: &b}, nil, nil
}}

// IssuePrincipalKey is POST /principals/{id}/keys and, with the key id
// of the path, POST /principals/{id}/keys/{key_id}/rotate: it mints the
// API key (answered once, recorded as its hash).
var IssuePrincipalKey = &Endpoint{auth: AuthPrincipal, body: "empty", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b struct{}
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	key, id := newAPIKey()
	return &domain.Command{Type: domain.CmdIssuePrincipalKey, IssueKey: &domain.IssuePrincipalKey{
		PrincipalID: in.PrincipalID, KeyHash: key.hash, KeyID: id, Replaces: in.KeyID,
	}}, key, nil
}}

// newAPIKey mints a principal API key and its random ID.
func newAPIKey() (*minted, string) {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return mint("api_key", APIKeyPrefix), "key_" + hex.EncodeToString(id[:])
}

// RevokePrincipalKey revokes a principal API key: DELETE
// /principals/{id}/keys/{key_id}.
var RevokePrincipalKey = &Endpoint{auth: AuthPrincipal, body: "empty", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b struct{}
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRevokePrincipalKey, RevokeKey: &domain.IssuePrincipalKey{
		PrincipalID: in.PrincipalID, KeyID: in.KeyID,
	}}, nil, nil
}}

// RotateToken mints a new token for an agent (the agent itself, with
// its current token, or its principal): POST /agents/{id}/token/rotate,
// qwed.agent.token.rotate. The old token stops working at once; the new
// one is in this answer only.
var RotateToken = &Endpoint{auth: AuthAgent, body: "token-rotate", build: func(in *Input, cr *Credentials) (*domain.Command, *minted, *Rejection) {
	var b agentFields
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	if e := b.apply(in, cr); e != nil {
		return nil, nil, e
	}
	tok := mint("agent_token", AgentTokenPrefix)
	return &domain.Command{Type: domain.CmdRotateAgentToken, AgentID: in.AgentID,
		NewToken: &domain.AgentTokenChange{TokenHash: tok.hash}}, tok, nil
}}

// RevokeToken revokes an agent's token (its principal or the admin):
// DELETE /agents/{id}/token, qwed.agent.token.revoke. The agent is refused
// until its principal rotates a new token.
var RevokeToken = &Endpoint{auth: AuthPrincipal, body: "empty", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b struct{}
	if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
		return nil, nil, e
	}
	return &domain.Command{Type: domain.CmdRevokeAgentToken, AgentID: in.AgentID,
		NewToken: &domain.AgentTokenChange{}}, nil, nil
}}

// resolveBody is the body of POST /approvals/{id}/approve and /deny.
type resolveBody struct {
	Reason string `json:"reason"`
}

func resolveEndpoint(approve bool) *Endpoint {
	return &Endpoint{auth: AuthPrincipal, body: "approval-decision", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
		var b resolveBody
		if e := decodeJSON(in.Body, &b, decodeOptions{emptyOK: true}); e != nil {
			return nil, nil, e
		}
		return &domain.Command{Type: domain.CmdResolveApproval, Resolve: &domain.ResolveApproval{
			ApprovalID: in.ApprovalID, Approve: approve, Reason: b.Reason,
		}}, nil, nil
	}}
}

// Approve and Deny are POST /approvals/{id}/approve and /deny.
var (
	Approve = resolveEndpoint(true)
	Deny    = resolveEndpoint(false)
)

// ResolveApproval is qwed.approval.resolve: data {approval_id, approve, reason}.
var ResolveApproval = &Endpoint{auth: AuthPrincipal, body: "approval-resolve", build: func(in *Input, _ *Credentials) (*domain.Command, *minted, *Rejection) {
	var b domain.ResolveApproval
	if e := decodeJSON(in.Body, &b, decodeOptions{}); e != nil {
		return nil, nil, e
	}
	if b.ApprovalID == "" {
		return nil, nil, missing("approval_id")
	}
	return &domain.Command{Type: domain.CmdResolveApproval, Resolve: &b}, nil, nil
}}
