package verify

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/domain/engines"
	"github.com/agentgate/agentgate/domain/engines/sql"
)

// DefaultActionTimeout bounds an engine's run on a verify_action command
// (the decision waits for it).
const DefaultActionTimeout = 5 * time.Second

// ActionVerifier runs the engines on verify_action commands, and on the
// action an A2A message is checked as (domain.A2AEngineAction): the gate's
// worker attaches its verdicts before Decide (handlers.WorkerConfig).
type ActionVerifier struct {
	reg     *Registry
	timeout time.Duration
	// params holds, per engine, the names of the params its capabilities
	// document declares (§4.2 params_schema "properties").
	params map[string]map[string]bool
}

// NewActionVerifier returns the verifier of reg's engines; timeout <= 0 is
// DefaultActionTimeout.
func NewActionVerifier(reg *Registry, timeout time.Duration) *ActionVerifier {
	if timeout <= 0 {
		timeout = DefaultActionTimeout
	}
	v := &ActionVerifier{reg: reg, timeout: timeout, params: map[string]map[string]bool{}}
	for _, c := range reg.Capabilities() {
		var sch struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if len(c.Params) > 0 && json.Unmarshal(c.Params, &sch) == nil {
			names := make(map[string]bool, len(sch.Properties))
			for k := range sch.Properties {
				names[k] = true
			}
			v.params[c.EngineID] = names
		}
	}
	return v
}

// engineParams picks, from an action's parameters, the members the engine
// declares as its params (an execute_code action's "language", an
// execute_sql action's "schema_ddl" and "dialect"), with gateParams set
// over them; the other members are the action's own. The engine decodes them strictly: a member of the
// wrong type answers ERROR, which the gate treats as UNCERTAIN (PENDING).
// Nil when there are none. json.Marshal sorts the members, so the params
// are a function of the action alone.
func (v *ActionVerifier) engineParams(id string, parameters json.RawMessage) json.RawMessage {
	names := v.params[id]
	picked := make(map[string]json.RawMessage, len(names))
	var all map[string]json.RawMessage
	if len(names) > 0 && len(parameters) > 0 && json.Unmarshal(parameters, &all) == nil {
		for k, raw := range all {
			if names[k] {
				picked[k] = raw
			}
		}
	}
	for k, raw := range gateParams[id] {
		picked[k] = raw
	}
	if len(picked) == 0 {
		return nil
	}
	b, err := json.Marshal(picked)
	if err != nil {
		return nil
	}
	return b
}

// gateParams are the params the gate sets on an engine's run for an
// action, over the action's own: the sql engine waives the checks the
// gate decides by the statement's risk class (sql.GateAllow), so that a
// trusted agent may still run the DELETE its trust level allows; the
// injection, schema and complexity checks still decide the verdict.
var gateParams = map[string]map[string]json.RawMessage{
	sql.EngineID: {"allow": mustJSON(sql.GateAllow())},
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// severityRank orders findings, most severe first.
var severityRank = map[string]int{"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}

func rankOf(sev string) int {
	if r, ok := severityRank[strings.ToLower(sev)]; ok {
		return r
	}
	return 5
}

// Verdict returns the verdict of the engine that verifies act's type
// (domain.EngineFor), or nil when no QWED engine verifies the type, the
// engine is not built in, or the action has nothing to verify: the gate
// then decides by its rules alone. The query is act.Code for execute_code
// (act.Query when Code is empty), act.Query otherwise; the engine's params
// come from act.Parameters (engineParams). The engine runs in the turn of
// ctx's tenant (fair.TenantOf: the gate's worker sets the agent and its
// principal) on the registry's queue; a tenant whose queue is full gets
// an ERROR verdict with QWED-SYS-002 at once (UNCERTAIN for the gate).
func (v *ActionVerifier) Verdict(ctx context.Context, act *domain.Action) *domain.EngineVerdict {
	id := domain.EngineFor(act.Type)
	if id == "" {
		return nil
	}
	e, ok := v.reg.Get(id)
	if !ok {
		return nil
	}
	query := act.Query
	if act.Type == "execute_code" && act.Code != "" {
		query = act.Code
	}
	if query == "" {
		return nil
	}
	o := runEngine(ctx, v.reg.Queue(id), e, engines.Request{Query: query, Type: id, Params: v.engineParams(id, act.Parameters)}, v.timeout)
	resp := render(id, o, false)
	out := &domain.EngineVerdict{
		Engine: id, EngineVersion: e.Capabilities().Version, Status: resp.Status,
		OutcomeDigest: outcomeDigest(resp), Risk: riskOf(o.Result),
	}
	if resp.Status == engines.Corrected {
		out.Corrected = o.Corrected
	}
	if resp.Error != nil {
		out.Code, out.Reason = resp.Error.Code, resp.Error.Message
	} else {
		out.Reason = messageOf(o.Result)
	}
	if len(out.Reason) > maxReasonBytes {
		out.Reason = out.Reason[:maxReasonBytes]
	}
	if len(o.Findings) > 0 {
		fs := slices.Clone(o.Findings)
		slices.SortStableFunc(fs, func(a, b engines.Finding) int {
			return cmp.Or(cmp.Compare(rankOf(a.Severity), rankOf(b.Severity)), cmp.Compare(a.Line, b.Line),
				cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
		})
		if len(fs) > domain.MaxVerdictFindings {
			fs = fs[:domain.MaxVerdictFindings]
		}
		out.Findings = fs
	}
	return out
}

// maxReasonBytes bounds the engine's reason recorded with a verdict.
const maxReasonBytes = 512

// riskOf reads the statement class an engine puts in its result as "risk_level"
// (the sql engine; docs/ARCHITECTURE.md, "Where the specifications disagree"):
// "" when there is none.
func riskOf(result any) domain.Risk {
	m := members(result)
	var s string
	if raw, ok := m["risk_level"]; ok && json.Unmarshal(raw, &s) == nil {
		if r, err := domain.ParseRisk(s); err == nil {
			return r
		}
		return domain.RiskCritical // a class the gate does not know: fail closed
	}
	return ""
}

// messageOf reads the "message" member of an engine result (§6.3).
func messageOf(result any) string {
	var s string
	if raw, ok := members(result)["message"]; ok && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func members(v any) map[string]json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
