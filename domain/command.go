package domain

import (
	"encoding/json"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
)

// CommandType names a command. The values are the CloudEvent types of the
// contracts of docs/ARCHITECTURE.md (the reply type is the command type +
// ".reply"); commands with no CloudEvent of their own (principal administration,
// Tick) use the same naming scheme.
type CommandType string

// The commands of the gate.
const (
	CmdRegisterAgent      CommandType = "qwed.agent.register"
	CmdVerifyAction       CommandType = "qwed.agent.action.verify"
	CmdVerifyToolCall     CommandType = "qwed.agent.tool.verify"
	CmdLogExecution       CommandType = "qwed.agent.execution.log"
	CmdRequestTrust       CommandType = "qwed.agent.trust.request"
	CmdResolveApproval    CommandType = "qwed.approval.resolve"
	CmdSetTrustLevel      CommandType = "qwed.agent.trust.set"
	CmdSuspendAgent       CommandType = "qwed.agent.suspend"
	CmdFileComplaint      CommandType = "qwed.agent.complaint"
	CmdPutToolRegistry    CommandType = "qwed.principal.tools.put"
	CmdIssuePrincipalKey  CommandType = "qwed.principal.key.issue"
	CmdRevokePrincipalKey CommandType = "qwed.principal.key.revoke"
	CmdRotateAgentToken   CommandType = "qwed.agent.token.rotate"
	CmdRevokeAgentToken   CommandType = "qwed.agent.token.revoke"
	CmdConfigure          CommandType = "qwed.gate.configure"
	CmdTick               CommandType = "qwed.gate.tick"
	CmdRejectRequest      CommandType = "qwed.gate.reject"
	CmdQWEDVerify         CommandType = "qwed.verify"
)

// RequestID identifies a request across retries: the CloudEvent source and
// id (HTTP requests get a source of "http" and a fresh id, or the client's
// Idempotency-Key header). Two commands with the same RequestID are the same
// request: the second gets the recorded decision again.
type RequestID struct {
	Source string `json:"source"`
	ID     string `json:"id"`
	// Scope is the credential the request was sent with (RequestScope):
	// the same source and id sent with another principal's key or another
	// agent token is another request, so that one tenant cannot claim
	// another's request ids (issue 11). It is "" for the gate's own
	// commands, for recorded refusals, and in logs written before it.
	Scope string `json:"scope,omitempty"`
}

// AdminPrincipal is the principal of the admin API key: it sees every agent.
const AdminPrincipal = "*"

// Command is one input to Decide: a tagged union whose Type says which
// payload pointer is set. It is recorded in the event it produces, so it
// must never hold a secret: tokens and keys arrive as SHA-256 hex hashes.
type Command struct {
	Type    CommandType `json:"type"`
	Request RequestID   `json:"request"`
	// Principal is the principal authenticated by API key, AdminPrincipal
	// for the admin key, "" when the caller authenticated as an agent.
	Principal string `json:"principal,omitempty"`
	// AgentID is the agent the command is about (path or body), if any.
	AgentID string `json:"agent_id,omitempty"`
	// TokenHash is the SHA-256 hex of the agent token the caller presented,
	// "" when none was presented.
	TokenHash string `json:"token_hash,omitempty"`

	Register     *RegisterAgent         `json:"register,omitempty"`
	Verify       *VerifyAction          `json:"verify,omitempty"`
	Tool         *VerifyToolCall        `json:"tool,omitempty"`
	Execution    *LogExecution          `json:"execution,omitempty"`
	Trust        *RequestTrustElevation `json:"trust,omitempty"`
	Resolve      *ResolveApproval       `json:"resolve,omitempty"`
	SetTrust     *SetTrustLevel         `json:"set_trust,omitempty"`
	Suspend      *SuspendAgent          `json:"suspend,omitempty"`
	Complaint    *FileComplaint         `json:"complaint,omitempty"`
	ToolRegistry *PutToolRegistry       `json:"tool_registry,omitempty"`
	IssueKey     *IssuePrincipalKey     `json:"issue_key,omitempty"`
	Configure    *Configure             `json:"configure,omitempty"`
	Tick         *Tick                  `json:"tick,omitempty"`
	Reject       *RejectRequest         `json:"reject,omitempty"`
	QWEDVerify   *QWEDVerify            `json:"qwed_verify,omitempty"`

	// Verdict is the verification engine's answer on a VerifyAction's
	// query or code, attached by the transport before Decide (issue 4;
	// engineverdict.go). It is never part of the request body.
	Verdict *EngineVerdict `json:"verdict,omitempty"`

	// Withheld stands for the payload of a command refused at
	// authentication (issue 11): the recorded command keeps its type,
	// request, credentials and agent, and the payload's digest and size
	// instead of the payload (withhold.go). Never set by a transport.
	Withheld *WithheldBody `json:"withheld,omitempty"`
	// RevokeKey names the principal API key to revoke (PrincipalID and
	// KeyID; KeyHash must be empty: Decide finds it).
	RevokeKey *IssuePrincipalKey `json:"revoke_key,omitempty"`
	// NewToken is the agent token that replaces the agent's
	// (CmdRotateAgentToken: the SHA-256 hex of the token the transport
	// minted; CmdRevokeAgentToken: empty, the agent then has none).
	NewToken *AgentTokenChange `json:"new_token,omitempty"`

	// A2A is the AgentMessage of a qwed.a2a.message (a2a.go).
	A2A *a2a.Message `json:"a2a,omitempty"`
	// A2ADigest is the payload digest of A2A (a2a.PayloadDigest),
	// computed by the transport while it validated the message
	// (a2a.DecodeDigest), off the partition's single writer; "" for a
	// command recorded before it existed, then Decide computes it. Never
	// part of the request body: only the gate's transports build
	// commands. Decide refuses one that is not "sha256:" and 64 lowercase
	// hex digits.
	A2ADigest string `json:"a2a_digest,omitempty"`
	// A2ABoundary is the change of a qwed.a2a.boundary.
	A2ABoundary *A2ABoundaryChange `json:"a2a_boundary,omitempty"`

	// Global marks a principal-wide command decided on GlobalPartition
	// for every partition, which copies its event (global.go); unset in
	// embedded mode and in logs written before it.
	Global bool `json:"global,omitempty"`
	// Copy is the payload of a CmdCopyPrincipalState.
	Copy *PrincipalStateCopy `json:"copy,omitempty"`

	// Business is the change of a CmdBusiness (execute_types.go).
	Business *BusinessChange `json:"business,omitempty"`
	// Execute is the request of a CmdPrepareExecute or CmdExecute.
	Execute *ExecuteRequest `json:"execute,omitempty"`
	// Outcome is the business's answer of a CmdExecuteOutcome.
	Outcome *ExecuteOutcome `json:"outcome,omitempty"`
	// Policy is the change of a CmdPolicy (policies.go).
	Policy *PolicyChange `json:"policy,omitempty"`
	// Webhook is the change of a CmdWebhook.
	Webhook *WebhookChange `json:"webhook,omitempty"`
	// Delivery is the delivery attempt of a CmdDelivery.
	Delivery *DeliveryResult `json:"delivery,omitempty"`
	// Authenticated marks an agent's command authenticated on the agent's
	// partition and forwarded to the consumer's home partition. Only a
	// gate sets it, never a decoder of a client's body.
	Authenticated *AuthenticatedAgent `json:"authenticated,omitempty"`
	// AgentBlocked is the notice a CmdAgentBlocked relays
	// (agentnotice.go). Only the gate sets it.
	AgentBlocked *AgentNotice `json:"agent_blocked,omitempty"`
	// OutputScan is the scan of the output an execution log carried
	// (ScanOutput, outputs.go), made by the transport from the body's
	// output, which the command never holds. Never part of the request
	// body.
	OutputScan *OutputScan `json:"output_scan,omitempty"`
	// PrincipalPermissions is the policy of a CmdPutPrincipalPermissions
	// (principalperms.go).
	PrincipalPermissions *PrincipalPermissions `json:"principal_permissions,omitempty"`
}

// RegisterAgent is the body of POST /agents/register (QWED-Agent spec v1.1 §3.1).
// Budget accepts both the flat form of §3.1 and the nested form of §6.1.
type RegisterAgent struct {
	Agent       AgentInfo   `json:"agent"`
	Permissions Permissions `json:"permissions"`
	Budget      Limits      `json:"budget"`
	// TrustLevel is 0-3 or untrusted/supervised/autonomous/trusted; when
	// absent the agent type decides (supervised 1, autonomous 2, trusted 3).
	TrustLevel *TrustLevel `json:"trust_level,omitempty"`
	// TokenHash is the SHA-256 hex of the token the caller minted; the
	// plaintext is returned once by the transport and never recorded.
	TokenHash string `json:"token_hash,omitempty"`
}

// AgentInfo describes an agent (QWED-Agent spec v1.1 §3.1 "agent").
type AgentInfo struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	PrincipalID string `json:"principal_id"`
	Framework   string `json:"framework,omitempty"`
	Model       string `json:"model,omitempty"`
}

// Permissions are an agent's engine and tool permissions.
type Permissions struct {
	AllowedEngines []string `json:"allowed_engines,omitempty"`
	AllowedTools   []string `json:"allowed_tools,omitempty"`
	BlockedTools   []string `json:"blocked_tools,omitempty"`
	// AllowedPaths are the absolute, normalised roots a file action may
	// touch (empty: any path the defaults and DeniedPaths do not deny);
	// DeniedPaths are globs ("**" spans elements) it may never touch.
	// Sensitive system and credential paths are denied whatever these say
	// (domain/guard, CheckFile).
	AllowedPaths []string `json:"allowed_paths,omitempty"`
	DeniedPaths  []string `json:"denied_paths,omitempty"`
	// AllowedHosts, AllowedSchemes and AllowedPorts are the egress policy
	// of network requests (domain/guard, CheckURL): hosts ("api.x.com",
	// "*.x.com" for subdomains, or an IP literal; empty: every public
	// host), schemes (empty: http and https), ports (empty: any).
	AllowedHosts   []string `json:"allowed_hosts,omitempty"`
	AllowedSchemes []string `json:"allowed_schemes,omitempty"`
	AllowedPorts   []int    `json:"allowed_ports,omitempty"`
}

// Limits are the budget limits of the QWED-Agent spec v1.1 §6.1. A zero limit means no
// limit on that dimension. The JSON decoding (in limits.go) accepts the
// flat form of §3.1 and the nested form of §6.1.
type Limits struct {
	MaxDailyCost        USD   `json:"max_daily_cost_usd,omitempty"`
	MaxPerRequestCost   USD   `json:"max_per_request_cost_usd,omitempty"`
	MaxRequestsPerHour  int64 `json:"max_requests_per_hour,omitempty"`
	MaxRequestsPerDay   int64 `json:"max_requests_per_day,omitempty"`
	MaxTokensPerRequest int64 `json:"max_tokens_per_request,omitempty"`
	MaxDailyTokens      int64 `json:"max_daily_tokens,omitempty"`
	MaxToolCallsPerHour int64 `json:"max_tool_calls_per_hour,omitempty"`
	MaxHighRiskCallsDay int64 `json:"max_high_risk_calls_per_day,omitempty"`
}

// VerifyAction is the body of POST /agents/{id}/verify (QWED-Agent spec v1.1 §4.1).
type VerifyAction struct {
	Action  Action        `json:"action"`
	Context ActionContext `json:"context"`
	Options Options       `json:"options"`
}

// Action is what the agent wants to do. Query, Code, Target and Parameters
// together with Type form the fingerprint of the QWED-Agent spec v1.1 §9.3 (RFC 8785).
type Action struct {
	Type       string          `json:"type"`
	Query      string          `json:"query,omitempty"`
	Code       string          `json:"code,omitempty"`
	Target     string          `json:"target,omitempty"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// EstimatedCost and EstimatedTokens are reserved against the budget at
	// decision time and replaced by the actual figures of LogExecution.
	EstimatedCost   USD   `json:"estimated_cost_usd,omitempty"`
	EstimatedTokens int64 `json:"estimated_tokens,omitempty"`
	// Output is the output the action declares it will produce (a message
	// body, a file's content, a reply to a user), at most MaxOutputBytes:
	// scanned for PII like an outbound action's parameters
	// (Config.OutputScan; outputs.go), part of the request digest, not of
	// the fingerprint of §9.3.
	Output string `json:"output,omitempty"`
}

// ActionContext is the context of the QWED-Agent spec v1.1 §9.1 and the QWED-Agent
// user guide (LOOP-004). StepNumber is a json.Number so that a missing, fractional or
// huge value is told apart from zero and rejected with the right code.
type ActionContext struct {
	ConversationID     string      `json:"conversation_id"`
	StepNumber         json.Number `json:"step_number,omitempty"`
	UserIntent         string      `json:"user_intent,omitempty"`
	PreActionStateHash string      `json:"pre_action_state_hash,omitempty"`
	StateSource        string      `json:"state_source,omitempty"`
}

// Options are the per-request options of the QWED-Agent spec v1.1 §4.1.
type Options struct {
	RequireAttestation bool `json:"require_attestation,omitempty"`
	// RiskThreshold (low/medium/high/critical): an action riskier than the
	// threshold is not approved autonomously (APPROVED becomes PENDING). It
	// can only make the gate stricter.
	RiskThreshold string `json:"risk_threshold,omitempty"`
}

// VerifyToolCall is the body of POST /agents/{id}/tools/{tool} (QWED-Agent spec
// v1.1 §5.1).
type VerifyToolCall struct {
	ToolCall      ToolCall       `json:"tool_call"`
	Justification string         `json:"justification,omitempty"`
	Context       *ActionContext `json:"context,omitempty"`
	Options       Options        `json:"options"`
}

// ToolCall names a tool and its parameters.
type ToolCall struct {
	ToolName        string          `json:"tool_name"`
	Parameters      json.RawMessage `json:"parameters,omitempty"`
	EstimatedCost   USD             `json:"estimated_cost_usd,omitempty"`
	EstimatedTokens int64           `json:"estimated_tokens,omitempty"`
}

// LogExecution is the body of POST /agents/{id}/executions: the actual
// outcome of an approved action.
type LogExecution struct {
	ActionID   string `json:"action_id"`
	Success    bool   `json:"success"`
	CostUSD    USD    `json:"cost_usd"`
	Tokens     int64  `json:"tokens"`
	ResultHash string `json:"result_hash,omitempty"`
	// Sandboxed attests that the action ran in a sandbox; an action whose
	// decision said sandbox_required and whose log does not attest it is
	// recorded flagged (ExecutionLogged.SandboxViolation).
	Sandboxed bool `json:"sandboxed,omitempty"`
	// Sandbox optionally describes the sandbox (kind, image digest,
	// attestation reference): at most MaxIDBytes (CheckBounds), recorded
	// as is.
	Sandbox string `json:"sandbox,omitempty"`
}

// RequestTrustElevation is the body of POST /agents/{id}/trust (QWED-Agent spec
// v1.1 §8.2).
type RequestTrustElevation struct {
	Request       string        `json:"request"`
	FromLevel     TrustLevel    `json:"from_level"`
	ToLevel       TrustLevel    `json:"to_level"`
	Justification string        `json:"justification,omitempty"`
	Evidence      TrustEvidence `json:"evidence"`
}

// TrustEvidence is the evidence of a trust elevation request. The gate
// computes the same figures from its own log and compares.
type TrustEvidence struct {
	DaysActive    int64       `json:"days_active"`
	TotalActions  int64       `json:"total_actions"`
	DeniedActions int64       `json:"denied_actions"`
	DenialRate    json.Number `json:"denial_rate,omitempty"`
	Attestations  int64       `json:"attestations"`
}

// ResolveApproval approves or denies a pending approval (POST
// /approvals/{id}/approve|deny).
type ResolveApproval struct {
	ApprovalID string `json:"approval_id"`
	Approve    bool   `json:"approve"`
	Reason     string `json:"reason,omitempty"`
}

// SetTrustLevel is a principal setting an agent's trust level directly.
type SetTrustLevel struct {
	Level  TrustLevel `json:"trust_level"`
	Reason string     `json:"reason,omitempty"`
}

// SuspendAgent suspends (or, with Suspended false, reinstates) an agent.
type SuspendAgent struct {
	Suspended bool   `json:"suspended"`
	Reason    string `json:"reason,omitempty"`
}

// FileComplaint is a principal's complaint about an agent: it suspends it
// (QWED-Agent spec v1.1 §8.3).
type FileComplaint struct {
	Reason string `json:"reason"`
}

// PutToolRegistry replaces a principal's tool registry (QWED-Agent spec v1.1 §5.3).
type PutToolRegistry struct {
	PrincipalID string     `json:"principal_id"`
	Tools       []ToolSpec `json:"tools"`
}

// ToolSpec is one entry of a tool registry (QWED-Agent spec v1.1 §5.3).
type ToolSpec struct {
	Name                 string `json:"name"`
	RiskLevel            Risk   `json:"risk_level"`
	RequiresVerification bool   `json:"requires_verification,omitempty"`
	RequiresApproval     bool   `json:"requires_approval,omitempty"`
	VerificationEngine   string `json:"verification_engine,omitempty"`
	SandboxRequired      bool   `json:"sandbox_required,omitempty"`
	// VerifyParameters names the parameters the verification engine
	// verifies (toolverify.go); empty: the engine's defaults.
	VerifyParameters []string `json:"verify_parameters,omitempty"`
}

// IssuePrincipalKey records a new API key for a principal (only its hash).
type IssuePrincipalKey struct {
	PrincipalID string `json:"principal_id"`
	KeyHash     string `json:"key_hash"`
	KeyID       string `json:"key_id"`
	// Replaces is the ID of a key of the same principal that this one
	// replaces (a rotation: the old key stops working when the new one is
	// issued, in one event); ReplacedHash is its hash, set by Decide in
	// the event, never in the command.
	Replaces     string `json:"replaces,omitempty"`
	ReplacedHash string `json:"replaced_hash,omitempty"`
}

// AgentTokenChange replaces an agent's token hash (a rotation), or clears
// it (a revocation: every token is then refused until the next rotation).
type AgentTokenChange struct {
	TokenHash string `json:"token_hash"`
}

// Configure records the server options that change decisions, so that a
// replay re-decides under the options that were in force.
type Configure struct {
	Config Config `json:"config"`
}

// Tick tells the gate that time has passed (approvals expire). It carries no
// data: the time is Env.Now.
type Tick struct{}

// RejectRequest records a request the transport refused before it became a
// command (bad API key, malformed body): the audit record of the rejection.
// It never holds the rejected body, only its size and digest.
type RejectRequest struct {
	Error      Error  `json:"error"`
	Endpoint   string `json:"endpoint"`
	BodyDigest string `json:"body_digest,omitempty"`
	BodyBytes  int64  `json:"body_bytes"`
}

// Config holds the server options that influence decisions.
type Config struct {
	// ApprovalTTL is how long a PENDING approval waits before it expires.
	ApprovalTTL Duration `json:"approval_ttl"`
	// DoomLoopGuardRequired makes pre_action_state_hash and state_source
	// mandatory (QWED-Agent user guide, DOOM_LOOP_GUARD_REQUIRED).
	DoomLoopGuardRequired bool `json:"doom_loop_guard_required"`
	// MaxSteps is the conversation step limit (QWED-Agent spec v1.1 §9.1: 50).
	MaxSteps int64 `json:"max_steps"`
	// WithholdRefusals records refusals at authentication with their
	// payload withheld (withhold.go). It is off in the state a log starts
	// from (NewState), so that a log written before it existed re-decides
	// its refusals as they were recorded, and on in DefaultConfig: a gate
	// started with it records the switch in a gate.configured event.
	WithholdRefusals bool `json:"withhold_refusals,omitempty"`
	// EngineSQLRisk makes the sql engine's statement class the one rule
	// of an SQL action's risk (the engine's class, refined by the type):
	// an SQL action whose verdict carries no class (the engine erred,
	// timed out or was not run, or the gate has no engines) is critical
	// when it holds a query. It is off in the state a log starts from
	// (NewState), so that a log written before it re-decides its SQL
	// actions with the tokenizer they were decided by (sqlrisk_legacy.go),
	// and on in DefaultConfig: a gate started with it records the switch
	// in a gate.configured event.
	EngineSQLRisk bool `json:"engine_sql_risk,omitempty"`
	// Detectors applies the path policy to file actions and the egress
	// policy to network requests (domain/guard). It is off in the state a
	// log starts from (NewState), so that a log written before it
	// re-decides its file and network actions on their type's risk alone,
	// and on in DefaultConfig: a gate started with it records the switch
	// in a gate.configured event.
	Detectors bool `json:"detectors,omitempty"`
	// PIIGuard scans outbound actions' targets and parameters and tool
	// calls' parameters for PII and credentials (detectors.go,
	// detectPII). Off in the state a log starts from, on in DefaultConfig,
	// like Detectors.
	PIIGuard bool `json:"pii_guard,omitempty"`
	// ToolVerification verifies the parameters of tool calls whose tool
	// requires it (toolverify.go) and checks registries' verification
	// engines. Off in the state a log starts from (NewState), so that a
	// log written before it re-decides its tool calls by the rules alone,
	// and on in DefaultConfig: a gate started with it records the switch
	// in a gate.configured event.
	ToolVerification bool `json:"tool_verification,omitempty"`
	// SandboxAttestation flags execution logs of actions decided with
	// sandbox_required that do not report sandboxed: true
	// (ExecutionLogged.SandboxViolation). Off in the state a log starts
	// from (NewState), so that a log written before it re-decides its
	// execution logs unflagged, and on in DefaultConfig.
	SandboxAttestation bool `json:"sandbox_attestation,omitempty"`
	// StrictGuards applies the second review of the guards
	// (docs/ARCHITECTURE.md, "Second review of issue 16: the guards"):
	// every path and URL an action or tool call names is checked, not
	// only the first; tool calls get the path and egress checks; paths
	// are matched without case; special-use host names are not public;
	// tool parameters to verify are found whatever their case and, for
	// the built-in SQL tools, wherever a statement is. Off in the state
	// a log starts from (NewState), on in DefaultConfig, recorded by
	// gate.configured like Detectors.
	StrictGuards bool `json:"strict_guards,omitempty"`
	// OutputScan accepts declared outputs (action.output, scanned for PII
	// before the action runs) and execution logs' outputs (scanned, then
	// recorded as their findings and hash, never their text), and records
	// every PII finding of a decision in its verification block
	// (outputs.go). Off in the state a log starts from, so that a log
	// written before it re-decides as the gate that refused those members
	// as unknown did, and on in DefaultConfig.
	OutputScan bool `json:"output_scan,omitempty"`
	// IDNHosts normalises URL hosts and allowed_hosts entries to their
	// ASCII form (UTS #46 mapping, IDNA2008 validation, A-labels;
	// guard.NormalizeHost) instead of refusing non-ASCII hosts. Off in
	// the state a log starts from (NewState), so that a log written
	// before it re-decides its URLs and registrations as they were, and on
	// in DefaultConfig.
	IDNHosts bool `json:"idn_hosts,omitempty"`
	// PrincipalPermissions admits PUT /principals/{id}/permissions and
	// holds every agent to its principal's path and egress policy beside
	// its own (principalperms.go). Off in the state a log starts from
	// (NewState), so that a log written before it re-decides as it was,
	// and on in DefaultConfig.
	PrincipalPermissions bool `json:"principal_permissions,omitempty"`
	// A2A configures agent-to-agent interception; nil stands for
	// DefaultA2AConfig (a2a.go), so configurations recorded before it
	// encode unchanged.
	A2A *A2AConfig `json:"a2a,omitempty"`
	// Execute configures executes through the gate; nil stands for
	// DefaultExecuteConfig (execute_types.go), so configurations recorded
	// before it encode unchanged.
	Execute *ExecuteConfig `json:"execute,omitempty"`
	// AgentNotices notifies an agent's principal of its blocked
	// decisions (agentnotice.go, QWED-Agent spec v1.1 §2.3): a DENIED
	// decision names the principal (ActionDecided.Notify), the
	// gate may relay it (CmdAgentBlocked), and a webhook may name
	// NoticeAgentBlocked in its events. Off in the state a log starts
	// from (NewState), so that a log written before it re-decides its
	// decisions and webhook changes as recorded, and on in DefaultConfig.
	AgentNotices bool `json:"agent_notices,omitempty"`
}

// DefaultConfig is the configuration of a new gate.
func DefaultConfig() Config {
	c := initialConfig()
	c.WithholdRefusals = true
	c.EngineSQLRisk = true
	c.Detectors = true
	c.PIIGuard = true
	c.ToolVerification = true
	c.SandboxAttestation = true
	c.StrictGuards = true
	c.AgentNotices = true
	c.OutputScan = true
	c.IDNHosts = true
	c.PrincipalPermissions = true
	return c
}

// initialConfig is the configuration in force before a log's first
// gate.configured event.
func initialConfig() Config {
	return Config{ApprovalTTL: Duration(24 * time.Hour), MaxSteps: 50}
}

// Duration is a time.Duration that encodes as a Go duration string ("24h0m0s").
type Duration time.Duration

// MarshalJSON encodes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
