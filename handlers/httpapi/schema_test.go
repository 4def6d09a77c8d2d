package httpapi

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/streams"
)

// checkEventSchema validates every event of log against the event schema
// (every test gate runs it when it stops, so each event the tests make
// is checked). A log the test left unreadable (a full disk) is skipped.
func checkEventSchema(t testing.TB, log streams.Log) {
	t.Helper()
	sch := schemas.Event()
	_ = log.Read(context.Background(), 1, func(r streams.Record) error {
		vs, err := sch.ValidateJSON(r.Payload)
		if err != nil || vs != nil {
			t.Errorf("event %d does not match the event schema: %v %+v\n%s", r.Seq, err, vs, r.Payload)
		}
		return nil
	})
}

// commandRoute is a command endpoint: the command type whose reply it
// answers and the name of its body's schema.
type commandRoute struct {
	typ  domain.CommandType
	body string
}

// commandRoutes are the command endpoints by route pattern.
var commandRoutes = map[string]commandRoute{
	"POST /agents/register":                      {domain.CmdRegisterAgent, "register"},
	"POST /agents/{id}/verify":                   {domain.CmdVerifyAction, "action-verify"},
	"POST /agents/{id}/tools/{tool}":             {domain.CmdVerifyToolCall, "tool-verify"},
	"POST /agents/{id}/executions":               {domain.CmdLogExecution, "execution-log"},
	"POST /agents/{id}/trust":                    {domain.CmdRequestTrust, "trust-request"},
	"POST /agents/{id}/trust-level":              {domain.CmdSetTrustLevel, "trust-set"},
	"POST /agents/{id}/suspend":                  {domain.CmdSuspendAgent, "suspend"},
	"POST /agents/{id}/complaints":               {domain.CmdFileComplaint, "complaint"},
	"PUT /principals/{id}/tools":                 {domain.CmdPutToolRegistry, "tools-put"},
	"PUT /principals/{id}/permissions":           {domain.CmdPutPrincipalPermissions, "permissions-put"},
	"POST /principals/{id}/keys":                 {domain.CmdIssuePrincipalKey, "empty"},
	"POST /principals/{id}/keys/{key_id}/rotate": {domain.CmdIssuePrincipalKey, "empty"},
	"DELETE /principals/{id}/keys/{key_id}":      {domain.CmdRevokePrincipalKey, "empty"},
	"POST /agents/{id}/token/rotate":             {domain.CmdRotateAgentToken, "token-rotate"},
	"DELETE /agents/{id}/token":                  {domain.CmdRevokeAgentToken, "empty"},
	"POST /approvals/{id}/approve":               {domain.CmdResolveApproval, "approval-decision"},
	"POST /approvals/{id}/deny":                  {domain.CmdResolveApproval, "approval-decision"},
	"POST /a2a/intercept":                        {domain.CmdA2AMessage, "a2a-message"},
	"POST /a2a/boundary/trust/{agent}":           {domain.CmdA2ABoundary, "empty"},
	"DELETE /a2a/boundary/trust/{agent}":         {domain.CmdA2ABoundary, "empty"},
	"POST /a2a/boundary/block/{agent}":           {domain.CmdA2ABoundary, "empty"},
	"DELETE /a2a/boundary/block/{agent}":         {domain.CmdA2ABoundary, "empty"},
	"POST /a2a/boundary/block-pair":              {domain.CmdA2ABoundary, "a2a-pair"},
	"DELETE /a2a/boundary/block-pair":            {domain.CmdA2ABoundary, "a2a-pair"},
	"POST /webhooks":                             {domain.CmdWebhook, "webhook"},
	"PUT /webhooks/{id}":                         {domain.CmdWebhook, "webhook"},
	"DELETE /webhooks/{id}":                      {domain.CmdWebhook, "empty"},
	"POST /agp/execute/prepare":                  {domain.CmdPrepareExecute, "execute"},
	"POST /agp/execute":                          {domain.CmdExecute, "execute"},
	"POST /businesses":                           {domain.CmdBusiness, "business"},
	"PUT /businesses/{id}":                       {domain.CmdBusiness, "business"},
	"DELETE /businesses/{id}":                    {domain.CmdBusiness, "empty"},
	"POST /policies":                             {domain.CmdPolicy, "policy"},
	"PUT /policies/{id}":                         {domain.CmdPolicy, "policy"},
	"DELETE /policies/{id}":                      {domain.CmdPolicy, "empty"},
}

// commandMux tells a request's command route (its pattern) by the
// server's own matching rules.
var commandMux = sync.OnceValue(func() *http.ServeMux {
	mux := http.NewServeMux()
	for p := range commandRoutes {
		mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
	}
	return mux
})

// checkSchemas holds a command request and its answer to their schemas:
// the answer to the reply's (or the error body), and a body the gate
// answered with a 2xx (so its decoder accepted it) to its body schema.
// Other requests are skipped. Every test request goes through it
// (testGate.doWith).
func checkSchemas(t testing.TB, req *http.Request, body []byte, status int, reply []byte) {
	t.Helper()
	_, pattern := commandMux().Handler(req)
	route, ok := commandRoutes[pattern]
	if !ok {
		return
	}
	checkReplyBody(t, string(route.typ), reply)
	if status/100 == 2 {
		s, _ := schemas.CommandBody(route.body)
		if len(body) == 0 {
			body = []byte("{}")
		}
		vs, err := s.ValidateJSON(body)
		if err != nil || vs != nil {
			t.Errorf("%s accepted a body its schema refuses: %v %+v\n%s", pattern, err, vs, body)
		}
	}
}

// checkReplyBody validates body, the reply to a command of type typ.
func checkReplyBody(t testing.TB, typ string, body []byte) {
	t.Helper()
	vs, err := schemas.ValidateReply(typ, body)
	if err != nil || vs != nil {
		t.Errorf("the reply to %s does not match its schema: %v %+v\n%s", typ, err, vs, body)
	}
}
