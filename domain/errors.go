package domain

import "fmt"

// Code is an error code of the specifications (QWED-Agent spec v1.1 Appendix A, QWED protocol v1.0 §8.3).
type Code string

// The error catalogue. Every code the gate returns is listed here, with its
// description and HTTP status, and nowhere else.
const (
	CodeAgentNotRegistered Code = "QWED-AGENT-001"
	CodeInvalidAgentToken  Code = "QWED-AGENT-002"
	CodeAgentSuspended     Code = "QWED-AGENT-003"
	CodeToolNotAllowed     Code = "QWED-AGENT-004"
	CodeVerificationFailed Code = "QWED-AGENT-005"

	CodeMissingContext    Code = "QWED-AGENT-CTX-001"
	CodeInvalidStepNumber Code = "QWED-AGENT-CTX-002"

	CodeStepLimit      Code = "QWED-AGENT-LOOP-001"
	CodeReplay         Code = "QWED-AGENT-LOOP-002"
	CodeRepetitiveLoop Code = "QWED-AGENT-LOOP-003"
	CodeDoomLoop       Code = "QWED-AGENT-LOOP-004"

	CodeBudgetCost   Code = "QWED-AGENT-BUDGET-001"
	CodeBudgetRate   Code = "QWED-AGENT-BUDGET-002"
	CodeBudgetTokens Code = "QWED-AGENT-BUDGET-003"

	CodeInsufficientTrust Code = "QWED-AGENT-TRUST-001"
	CodeRequiresApproval  Code = "QWED-AGENT-TRUST-002"

	CodeA2AFinance      Code = "QWED-A2A-001"
	CodeA2ALogic        Code = "QWED-A2A-002"
	CodeA2ACode         Code = "QWED-A2A-003"
	CodeA2ATrustBlocked Code = "QWED-A2A-004"
	CodeA2ARateLimited  Code = "QWED-A2A-005"
	CodeA2AEngineError  Code = "QWED-A2A-006"
	CodeA2AAttestation  Code = "QWED-A2A-007"

	// The execute policy (Agent Policy Engine spec §2.4) and the
	// consumer policies (§3).
	CodeExecConfirmationRequired Code = "QWED-EXEC-001"
	CodeExecTokenInvalid         Code = "QWED-EXEC-002"
	CodeExecTokenExpired         Code = "QWED-EXEC-003"
	CodeExecTokenMismatch        Code = "QWED-EXEC-004"
	CodeExecAmountExceeded       Code = "QWED-EXEC-005"
	CodeExecUnparseable          Code = "QWED-EXEC-006"
	CodeExecUnknownBusiness      Code = "QWED-EXEC-007"
	CodeExecBusinessFailed       Code = "QWED-EXEC-008"
	CodePolicySpending           Code = "QWED-POLICY-001"
	CodePolicyCategory           Code = "QWED-POLICY-002"
	CodePolicyTimeWindow         Code = "QWED-POLICY-003"
	CodePolicyConfirmation       Code = "QWED-POLICY-004"

	CodeInvalidRequest   Code = "QWED-REQ-001"
	CodeMissingField     Code = "QWED-REQ-002"
	CodeInvalidSyntax    Code = "QWED-REQ-003"
	CodeTooLong          Code = "QWED-REQ-004"
	CodeUnsupportedType  Code = "QWED-REQ-005"
	CodeMissingAPIKey    Code = "QWED-AUTH-001"
	CodeInvalidAPIKey    Code = "QWED-AUTH-002"
	CodeForbidden        Code = "QWED-AUTH-003"
	CodeRateLimited      Code = "QWED-AUTH-004"
	CodeEngineInit       Code = "QWED-ENG-001"
	CodeEngineFailed     Code = "QWED-ENG-002"
	CodeTimeout          Code = "QWED-ENG-003"
	CodeInternal         Code = "QWED-SYS-001"
	CodeUnavailable      Code = "QWED-SYS-002"
	CodeStorageFull      Code = "QWED-SYS-003"
	CodeNotFound         Code = "QWED-REQ-404"
	CodeConflict         Code = "QWED-REQ-409"
	CodeSecurityViolated Code = "QWED-SEC-002"
	CodeEngineMissing    Code = "QWED-ENG-004"
	CodePromptInjection  Code = "QWED-SEC-001"
	CodePIIDetected      Code = "QWED-SEC-003"
)

// CodeInfo describes one code of the catalogue.
type CodeInfo struct {
	Code        Code
	HTTPStatus  int
	Description string
}

// Catalogue lists every code in code order: by family (AGENT, its CTX,
// LOOP, BUDGET and TRUST codes, A2A, EXEC, POLICY, REQ, AUTH, ENG, SEC, SYS), then by number.
// It is rendered into docs/errors.md; a test holds the order.
var Catalogue = []CodeInfo{
	{CodeAgentNotRegistered, 404, "Agent not registered"},
	{CodeInvalidAgentToken, 401, "Invalid agent token"},
	{CodeAgentSuspended, 403, "Agent suspended"},
	{CodeToolNotAllowed, 403, "Tool not allowed"},
	{CodeVerificationFailed, 403, "Verification failed"},
	{CodeMissingContext, 400, "Missing required action context (conversation_id and step_number)"},
	{CodeInvalidStepNumber, 400, "Invalid step_number (must be >= 1)"},
	{CodeStepLimit, 403, "Conversation step limit exceeded (max 50 steps)"},
	{CodeReplay, 409, "Replay or out-of-order action step detected"},
	{CodeRepetitiveLoop, 403, "Repetitive action loop detected (max 2 consecutive identical actions)"},
	{CodeDoomLoop, 403, "No-progress doom loop detected (same action on unchanged state 3 or more times)"},
	{CodeBudgetCost, 429, "Cost limit exceeded"},
	{CodeBudgetRate, 429, "Rate limit exceeded"},
	{CodeBudgetTokens, 429, "Token limit exceeded"},
	{CodeInsufficientTrust, 403, "Insufficient trust level"},
	{CodeRequiresApproval, 202, "Action requires approval"},
	{CodeA2AFinance, 403, "A2A message blocked: mathematical hallucination (finance_guard)"},
	{CodeA2ALogic, 403, "A2A message blocked: logical contradiction (logic_guard)"},
	{CodeA2ACode, 403, "A2A message blocked: dangerous code pattern (code_guard)"},
	{CodeA2ATrustBlocked, 403, "A2A message blocked by the trust boundary"},
	{CodeA2ARateLimited, 429, "A2A pair rate limited (token bucket)"},
	{CodeA2AEngineError, 500, "A2A verification engine error (block_on_error)"},
	{CodeA2AAttestation, 500, "A2A attestation could not be issued (fail closed)"},
	{CodeExecConfirmationRequired, 403, "Execute confirmation required (X-Confirmation-Token header missing)"},
	{CodeExecTokenInvalid, 403, "Invalid confirmation token"},
	{CodeExecTokenExpired, 403, "Confirmation token expired"},
	{CodeExecTokenMismatch, 403, "Confirmation token does not match this execute request"},
	{CodeExecAmountExceeded, 403, "Execute amount exceeds the policy limit (strict mode)"},
	{CodeExecUnparseable, 403, "Unable to validate the confirmation token for the execute payload"},
	{CodeExecUnknownBusiness, 404, "Unknown business"},
	{CodeExecBusinessFailed, 502, "Business call failed (error or timeout)"},
	{CodePolicySpending, 403, "Blocked by a spending limit policy"},
	{CodePolicyCategory, 403, "Blocked by a category policy"},
	{CodePolicyTimeWindow, 403, "Blocked by a time window policy"},
	{CodePolicyConfirmation, 403, "Confirmation denied or expired"},
	{CodeInvalidRequest, 400, "Invalid request format"},
	{CodeMissingField, 400, "Missing required field"},
	{CodeInvalidSyntax, 400, "Invalid query syntax"},
	{CodeTooLong, 413, "Request too large"},
	{CodeUnsupportedType, 400, "Unsupported action or verification type"},
	{CodeNotFound, 404, "Resource not found"},
	{CodeConflict, 409, "Conflicting request"},
	{CodeMissingAPIKey, 401, "Missing API key"},
	{CodeInvalidAPIKey, 401, "Invalid API key"},
	{CodeForbidden, 403, "Insufficient permissions"},
	{CodeRateLimited, 429, "Rate limit exceeded"},
	{CodeEngineInit, 500, "Engine initialization failed"},
	{CodeEngineFailed, 500, "Verification failed unexpectedly"},
	{CodeTimeout, 504, "Verification timeout"},
	{CodeEngineMissing, 500, "Engine not available"},
	{CodePromptInjection, 403, "Prompt injection detected"},
	{CodeSecurityViolated, 403, "Malicious payload detected"},
	{CodePIIDetected, 403, "PII detected (redacted)"},
	{CodeInternal, 500, "Internal server error"},
	{CodeUnavailable, 503, "Service unavailable"},
	{CodeStorageFull, 503, "Storage full: writes are refused until disk space is freed (reads are served)"},
}

var catalogueIndex = func() map[Code]CodeInfo {
	m := make(map[Code]CodeInfo, len(Catalogue))
	for _, c := range Catalogue {
		m[c.Code] = c
	}
	return m
}()

// HTTPStatus returns the HTTP status of code, or 500 for a code that is not
// in the catalogue (a bug, surfaced as an internal error).
func (c Code) HTTPStatus() int {
	if info, ok := catalogueIndex[c]; ok {
		return info.HTTPStatus
	}
	return 500
}

// Description returns the catalogue's description of code, or the code
// itself for a code that is not in the catalogue.
func (c Code) Description() string {
	if info, ok := catalogueIndex[c]; ok {
		return info.Description
	}
	return string(c)
}

// Known reports whether c is in the catalogue.
func (c Code) Known() bool {
	_, ok := catalogueIndex[c]
	return ok
}

// Error is the one error shape of the gate: {"code","message","details"}.
type Error struct {
	Code    Code    `json:"code"`
	Message string  `json:"message"`
	Details Details `json:"details,omitempty"`
}

// Details are the details of an Error: a JSON object. Each value is one of
// the detail values the event codec (domain/eventjson) writes — nil, bool,
// string, a Go integer type, a finite float64, USD, json.Number (a valid
// number), json.RawMessage (valid JSON), time.Time and *time.Time (years
// 0-9999, offsets under a day), []string, []engines.Finding, and []any,
// map[string]any and Details of detail values — and an event whose error
// details hold anything else cannot be encoded: the codec refuses it with
// an error (a programming error, caught by the tests that encode every
// event the rules and engines make). A literal map[string]any converts to
// Details implicitly. A decoded event's details hold strings, booleans,
// nulls, numbers as json.Number and arrays and objects as
// json.RawMessage, which encode back to the bytes they were decoded from.
type Details map[string]any

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message and no details.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
