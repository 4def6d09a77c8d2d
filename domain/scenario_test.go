package domain

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/engines"
)

// Scenario tests: testdata/scenarios/*.txt hold command → expected output
// blocks in the style of pebble's datadriven files:
//
//	# comment
//	verify a1 conv=c1 step=1 type=calculate query=2+2
//	----
//	APPROVED
//
// Run with -rewrite to regenerate the expected output after reviewing a
// change. The commands are documented in runScenarioCommand.

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of scenario files")

type scenarioCase struct {
	comments []string
	cmd      string
	want     string
	line     int
}

func parseScenario(t *testing.T, path string) []scenarioCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []scenarioCase
	var cur *scenarioCase
	var comments []string
	inOutput := false
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case inOutput:
			if line == "" {
				inOutput = false
				cases = append(cases, *cur)
				cur = nil
				continue
			}
			cur.want += line + "\n"
		case line == "----":
			if cur == nil {
				t.Fatalf("%s:%d: ---- without a command", path, n)
			}
			inOutput = true
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
			if cur != nil {
				t.Fatalf("%s:%d: command without ----", path, n)
			}
			comments = append(comments, line)
		default:
			if cur != nil {
				t.Fatalf("%s:%d: two commands without ----", path, n)
			}
			cur = &scenarioCase{comments: comments, cmd: line, line: n}
			comments = nil
		}
	}
	if cur != nil {
		cases = append(cases, *cur)
	}
	if len(comments) > 0 {
		cases = append(cases, scenarioCase{comments: comments})
	}
	return cases
}

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			cases := parseScenario(t, path)
			r := newScenarioRunner(t)
			var out strings.Builder
			for i := range cases {
				c := &cases[i]
				for _, l := range c.comments {
					out.WriteString(l + "\n")
				}
				if c.cmd == "" {
					continue
				}
				got := r.run(c.cmd)
				if !*rewrite && got != c.want {
					t.Errorf("%s:%d: %s\ngot:\n%swant:\n%s", path, c.line, c.cmd, got, c.want)
				}
				out.WriteString(c.cmd + "\n----\n" + got + "\n")
			}
			if *rewrite {
				if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type scenarioRunner struct {
	g      *gate
	agents map[string]string // name → agent ID
	labels map[string]string // label → action or approval ID
	last   string            // last action or approval ID
}

func newScenarioRunner(t *testing.T) *scenarioRunner {
	return &scenarioRunner{g: newGate(t), agents: map[string]string{}, labels: map[string]string{}}
}

// splitArgs splits a command line into words at spaces; a word that starts
// with a double quote runs to the next quote followed by a space or the end
// ("query=x > 1"). Quotes inside a word are literal (params={"a":1}).
func splitArgs(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out
		}
		if s[0] == '"' {
			end := strings.Index(s[1:], "\" ")
			if end < 0 {
				out = append(out, strings.TrimSuffix(s[1:], "\""))
				return out
			}
			out = append(out, s[1:1+end])
			s = s[end+2:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
}

type scenarioArgs struct {
	pos []string
	kv  map[string]string
}

func parseArgs(words []string) scenarioArgs {
	a := scenarioArgs{kv: map[string]string{}}
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			a.kv[k] = v
		} else {
			a.pos = append(a.pos, w)
		}
	}
	return a
}

func (a scenarioArgs) get(k string) (string, bool) { v, ok := a.kv[k]; return v, ok }

func (a scenarioArgs) str(k string) string { return a.kv[k] }

func (a scenarioArgs) int(k string) int64 {
	v, ok := a.kv[k]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("argument %s=%q: %v", k, v, err))
	}
	return n
}

func (a scenarioArgs) usd(k string) USD {
	v, ok := a.kv[k]
	if !ok {
		return 0
	}
	u, err := ParseUSD(v)
	if err != nil {
		panic(fmt.Sprintf("argument %s=%q: %v", k, v, err))
	}
	return u
}

func (a scenarioArgs) list(k string) []string {
	v, ok := a.kv[k]
	if !ok || v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func (r *scenarioRunner) agent(name string) string {
	if id, ok := r.agents[name]; ok {
		return id
	}
	return name // unknown agents are passed through (AGENT-001)
}

func (r *scenarioRunner) ref(s string) string {
	if s == "last" || s == "" {
		return r.last
	}
	if id, ok := r.labels[s]; ok {
		return id
	}
	return s
}

// authenticate fills the credentials: the agent token by default,
// token=wrong for a wrong one, token=none for none, as=<principal> for a
// principal key.
func (r *scenarioRunner) authenticate(cmd *Command, name string, a scenarioArgs) {
	cmd.TokenHash = tokenHash(name)
	switch a.str("token") {
	case "wrong":
		cmd.TokenHash = tokenHash("someone else")
	case "none":
		cmd.TokenHash = ""
	}
	if p, ok := a.get("as"); ok {
		cmd.TokenHash = ""
		cmd.Principal = p
	}
}

// context builds the action context: conv=, step=, state=<seed> (hashed;
// "bad" gives a malformed hash), source=<state_source> (db_snapshot when a
// state is given without one; "none" leaves it out).
func (r *scenarioRunner) context(a scenarioArgs) *ActionContext {
	conv, hasConv := a.get("conv")
	step, hasStep := a.get("step")
	st, hasState := a.get("state")
	src, hasSource := a.get("source")
	if !hasConv && !hasStep && !hasState && !hasSource {
		return nil
	}
	c := &ActionContext{ConversationID: conv, StepNumber: json.Number(step), StateSource: src}
	switch {
	case st == "bad":
		c.PreActionStateHash = "ABC"
	case hasState:
		c.PreActionStateHash = stateHash(st)
	}
	if hasState && !hasSource {
		c.StateSource = "db_snapshot"
	}
	if src == "none" {
		c.StateSource = ""
	}
	return c
}

func (r *scenarioRunner) options(a scenarioArgs) Options {
	attest := false
	for _, w := range a.pos {
		attest = attest || w == "attest"
	}
	return Options{RequireAttestation: attest, RiskThreshold: a.str("threshold")}
}

func (r *scenarioRunner) run(line string) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprintf("panic: %v\n", p)
		}
	}()
	words := splitArgs(line)
	a := parseArgs(words[1:])
	g := r.g
	switch words[0] {
	case "time":
		t, err := time.Parse(time.RFC3339, a.pos[0])
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		g.now = t
		return g.now.Format(time.RFC3339) + "\n"
	case "advance":
		d, err := time.ParseDuration(a.pos[0])
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		g.now = g.now.Add(d)
		return g.now.Format(time.RFC3339) + "\n"
	case "signer":
		switch a.pos[0] {
		case "off":
			g.signer = nil
		case "fail":
			g.signer = failingSigner{}
		default:
			g.signer = hashSigner{}
		}
		return "ok\n"
	case "register":
		name := a.pos[0]
		p := a.str("principal")
		if p == "" {
			p = "org_1"
		}
		by := p
		if v, ok := a.get("by"); ok {
			by = v
		}
		reg := &RegisterAgent{
			Agent:       AgentInfo{Name: name, Type: a.str("type"), PrincipalID: p},
			Permissions: Permissions{AllowedEngines: a.list("engines"), AllowedTools: a.list("tools"), BlockedTools: a.list("blocked")},
			TokenHash:   tokenHash(name),
		}
		if reg.Agent.Type == "" {
			reg.Agent.Type = "supervised"
		}
		if v, ok := a.get("trust"); ok {
			var tl TrustLevel
			if err := json.Unmarshal([]byte(strconv.Quote(v)), &tl); err != nil {
				return "error: " + err.Error() + "\n"
			}
			reg.TrustLevel = &tl
		}
		if b, ok := a.get("budget"); ok {
			if err := json.Unmarshal([]byte(b), &reg.Budget); err != nil {
				return "error: " + err.Error() + "\n"
			}
		}
		if v, ok := a.get("token_hash"); ok {
			reg.TokenHash = v
		}
		cmd := &Command{Type: CmdRegisterAgent, Principal: by, Register: reg}
		if id, ok := a.get("id"); ok {
			cmd.Request = RequestID{Source: "scenario", ID: id}
		}
		ev := g.exec(cmd)
		if ev.Type == EvAgentRegistered {
			r.agents[name] = ev.AgentID
			return fmt.Sprintf("registered %s trust=%d\n", name, ev.Registered.TrustLevel)
		}
		return formatEvent(ev)
	case "verify":
		name := a.pos[0]
		v := &VerifyAction{
			Action: Action{Type: a.str("type"), Query: a.str("query"), Code: a.str("code"), Target: a.str("target"),
				EstimatedCost: a.usd("cost"), EstimatedTokens: a.int("tokens")},
			Options: r.options(a),
		}
		if p, ok := a.get("params"); ok {
			v.Action.Parameters = json.RawMessage(p)
		}
		if c := r.context(a); c != nil {
			v.Context = *c
		}
		cmd := &Command{Type: CmdVerifyAction, AgentID: r.agent(name), Verify: v, Verdict: scenarioVerdict(a)}
		r.authenticate(cmd, name, a)
		return r.decided(g.exec(cmd), a)
	case "tool":
		name := a.pos[0]
		v := &VerifyToolCall{
			ToolCall: ToolCall{ToolName: a.str("name"), EstimatedCost: a.usd("cost"), EstimatedTokens: a.int("tokens")},
			Context:  r.context(a), Options: r.options(a),
		}
		if p, ok := a.get("params"); ok {
			v.ToolCall.Parameters = json.RawMessage(p)
		}
		cmd := &Command{Type: CmdVerifyToolCall, AgentID: r.agent(name), Tool: v}
		r.authenticate(cmd, name, a)
		return r.decided(g.exec(cmd), a)
	case "log":
		name := a.pos[0]
		_, failed := a.get("failed")
		cmd := &Command{Type: CmdLogExecution, AgentID: r.agent(name), Execution: &LogExecution{
			ActionID: r.ref(a.str("action")), Success: !failed, CostUSD: a.usd("cost"), Tokens: a.int("tokens"),
		}}
		r.authenticate(cmd, name, a)
		ev := g.exec(cmd)
		if ev.Type == EvExecutionLogged {
			x := ev.Executed
			return fmt.Sprintf("logged cost_delta=%s tokens_delta=%d same_day=%v\n%s", x.CostDelta, x.TokensDelta, x.SameDay, formatRemaining(x.Budget))
		}
		return formatEvent(ev)
	case "resolve":
		by := "org_1"
		if v, ok := a.get("by"); ok {
			by = v
		}
		cmd := &Command{Type: CmdResolveApproval, Principal: by, Resolve: &ResolveApproval{
			ApprovalID: r.ref(a.pos[0]), Approve: a.pos[1] == "approve", Reason: a.str("reason"),
		}}
		ev := g.exec(cmd)
		if ev.Type == EvApprovalResolved {
			res := ev.Resolved
			s := fmt.Sprintf("approval %s by %s\n", res.Approval.Status, res.Approval.ResolvedBy)
			if res.ReleasedCost != 0 || res.ReleasedTokens != 0 {
				s += fmt.Sprintf("released cost=%s tokens=%d\n", res.ReleasedCost, res.ReleasedTokens)
			}
			if res.Trust != nil {
				s += fmt.Sprintf("trust: %d -> %d (%s)\n", res.Trust.From, res.Trust.To, res.Trust.Reason)
			}
			return s
		}
		return formatEvent(ev)
	case "trust-request":
		name := a.pos[0]
		cmd := &Command{Type: CmdRequestTrust, AgentID: r.agent(name), Trust: &RequestTrustElevation{
			Request: "trust_elevation", FromLevel: TrustLevel(a.int("from")), ToLevel: TrustLevel(a.int("to")),
			Justification: a.str("why"),
			Evidence: TrustEvidence{DaysActive: a.int("days"), TotalActions: a.int("actions"), DeniedActions: a.int("denied"),
				DenialRate: json.Number(a.str("rate")), Attestations: a.int("attestations")},
		}}
		r.authenticate(cmd, name, a)
		ev := g.exec(cmd)
		if ev.Type == EvTrustElevationRequested {
			el := ev.Elevation
			c := el.Computed
			s := fmt.Sprintf("accepted=%v computed: days=%d actions=%d denied=%d rate=%s attestations=%d\n",
				el.Accepted, c.DaysActive, c.TotalActions, c.DeniedActions, c.DenialRate, c.Attestations)
			for _, reason := range el.Reasons {
				s += "reason: " + reason + "\n"
			}
			if el.Approval != nil {
				r.last = el.Approval.ID
				if l, ok := a.get("label"); ok {
					r.labels[l] = el.Approval.ID
				}
				s += fmt.Sprintf("approval: %s pending until %s\n", el.Approval.Kind, el.Approval.ExpiresAt.Format(time.RFC3339))
			}
			return s
		}
		return formatEvent(ev)
	case "set-trust", "suspend", "reinstate", "complaint":
		name := a.pos[0]
		by := "org_1"
		if v, ok := a.get("by"); ok {
			by = v
		}
		cmd := &Command{AgentID: r.agent(name), Principal: by}
		switch words[0] {
		case "set-trust":
			cmd.Type, cmd.SetTrust = CmdSetTrustLevel, &SetTrustLevel{Level: TrustLevel(a.int("level")), Reason: a.str("reason")}
		case "suspend", "reinstate":
			cmd.Type, cmd.Suspend = CmdSuspendAgent, &SuspendAgent{Suspended: words[0] == "suspend", Reason: a.str("reason")}
		default:
			cmd.Type, cmd.Complaint = CmdFileComplaint, &FileComplaint{Reason: a.str("reason")}
		}
		return formatEvent(g.exec(cmd))
	case "registry":
		var tools []ToolSpec
		if err := json.Unmarshal([]byte(a.str("tools")), &tools); err != nil {
			return "error: " + err.Error() + "\n"
		}
		p := a.str("principal")
		by := p
		if v, ok := a.get("by"); ok {
			by = v
		}
		return formatEvent(g.exec(&Command{Type: CmdPutToolRegistry, Principal: by,
			ToolRegistry: &PutToolRegistry{PrincipalID: p, Tools: tools}}))
	case "configure":
		c := g.s.Config
		if v, ok := a.get("max_steps"); ok {
			c.MaxSteps, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := a.get("ttl"); ok {
			d, _ := time.ParseDuration(v)
			c.ApprovalTTL = Duration(d)
		}
		if v, ok := a.get("guard"); ok {
			c.DoomLoopGuardRequired = v == "true"
		}
		by := AdminPrincipal
		if v, ok := a.get("by"); ok {
			by = v
		}
		return formatEvent(g.exec(&Command{Type: CmdConfigure, Principal: by, Configure: &Configure{Config: c}}))
	case "tick":
		ev := g.exec(&Command{Type: CmdTick, Tick: &Tick{}})
		if ev == nil {
			return "nothing due\n"
		}
		return formatEvent(ev)
	case "budget":
		ag := g.s.Agents[r.agent(a.pos[0])]
		b, _ := json.Marshal(ag.BudgetView(g.now))
		return string(b) + "\n"
	case "agent":
		ag := g.s.Agents[r.agent(a.pos[0])]
		return fmt.Sprintf("status=%s trust=%d total=%d denied=%d attestations=%d recent=%d budget_denials=%d open=%d\n",
			ag.Status, ag.Trust, ag.TotalActions, ag.DeniedActions, ag.Attestations, len(ag.Recent), len(ag.BudgetDenials), len(ag.OpenActions))
	case "conversation":
		ag := g.s.Agents[r.agent(a.pos[0])]
		c := ag.Conversations[a.pos[1]]
		if c == nil {
			return "none\n"
		}
		return fmt.Sprintf("last_step=%d repeats=%d window=%d\n", c.LastStep, c.Repeats, len(c.StateWindow))
	case "repeat":
		// repeat N <command with {i}>: runs the command N times, prints a tally.
		n, _ := strconv.Atoi(words[1])
		tmpl := strings.Join(words[2:], " ")
		counts := map[string]int{}
		for i := 1; i <= n; i++ {
			got := r.run(strings.ReplaceAll(tmpl, "{i}", strconv.Itoa(i)))
			first, _, _ := strings.Cut(got, "\n")
			if c, _, ok := strings.Cut(first, ":"); ok {
				first = c
			}
			counts[first]++
		}
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var s strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&s, "%dx %s\n", counts[k], k)
		}
		return s.String()
	}
	return "unknown scenario command " + words[0] + "\n"
}

// decided renders a decision: the decision and error on the first line,
// then the trust change, approval and attestation, and with show=… extra
// detail (checks, budget, risk).
func (r *scenarioRunner) decided(ev *Event, a scenarioArgs) string {
	if ev.Type != EvActionDecided {
		return formatEvent(ev)
	}
	d := ev.Decided
	r.last = d.ActionID
	if l, ok := a.get("label"); ok {
		r.labels[l] = d.ActionID
	}
	var s strings.Builder
	s.WriteString(string(d.Decision))
	if d.Error != nil {
		fmt.Fprintf(&s, " %s: %s", d.Error.Code, d.Error.Message)
	}
	s.WriteString("\n")
	if d.Error != nil && len(d.Error.Details) > 0 && (d.Decision == BudgetExceeded || strings.Contains(a.str("show"), "details")) {
		s.WriteString("details: " + formatDetails(d.Error.Details) + "\n")
	}
	if d.Trust != nil {
		fmt.Fprintf(&s, "trust: %d -> %d (%s)\n", d.Trust.From, d.Trust.To, d.Trust.Reason)
	}
	if d.Approval != nil {
		fmt.Fprintf(&s, "approval: %s pending until %s: %s\n", d.Approval.Kind, d.Approval.ExpiresAt.Format(time.RFC3339), d.Approval.Summary)
	}
	if d.Attestation != "" {
		s.WriteString("attestation: issued\n")
	}
	show := a.str("show")
	if strings.Contains(show, "risk") {
		fmt.Fprintf(&s, "verification: %s engine=%s risk=%s", d.Verification.Status, d.Verification.Engine, d.Verification.RiskLevel)
		if d.Verification.RiskScore != "" {
			fmt.Fprintf(&s, " score=%s", d.Verification.RiskScore)
		}
		if d.Verification.Sandbox {
			s.WriteString(" sandbox")
		}
		s.WriteString("\n")
	}
	if strings.Contains(show, "checks") {
		fmt.Fprintf(&s, "passed: %s\n", strings.Join(d.Verification.ChecksPassed, ","))
		if len(d.Verification.ChecksFailed) > 0 {
			fmt.Fprintf(&s, "failed: %s\n", strings.Join(d.Verification.ChecksFailed, ","))
		}
	}
	if strings.Contains(show, "budget") {
		s.WriteString(formatRemaining(d.Budget))
	}
	if d.CorrectedAction != nil {
		fmt.Fprintf(&s, "corrected: query=%s code=%s digest=%s\n", d.CorrectedAction.Query, d.CorrectedAction.Code, d.CorrectedDigest)
	}
	if c := ev.Command; c != nil && c.Verdict != nil {
		fmt.Fprintf(&s, "verdict: %s %s findings=%d\n", c.Verdict.Engine, c.Verdict.Status, len(d.Verification.Findings))
	}
	return s.String()
}

// scenarioVerdict builds the engine verdict of a verify command from its
// arguments: engine=<id> status=<STATUS> [corrected=<query>] [risk=<level>]
// [reason=<text>] [findings=<rule>:<severity>,...]; nil without engine=.
func scenarioVerdict(a scenarioArgs) *EngineVerdict {
	id, ok := a.get("engine")
	if !ok {
		return nil
	}
	v := &EngineVerdict{Engine: id, Status: engines.Status(a.str("status")), OutcomeDigest: strings.Repeat("ab", 32),
		Corrected: a.str("corrected"), Risk: Risk(a.str("risk")), Reason: a.str("reason")}
	for _, f := range a.list("findings") {
		rule, sev, _ := strings.Cut(f, ":")
		v.Findings = append(v.Findings, engines.Finding{Rule: rule, Severity: sev, Message: rule + " found"})
	}
	return v
}

func formatRemaining(b BudgetRemaining) string {
	var parts []string
	add := func(name string, v *int64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
		}
	}
	if b.DailyCost != nil {
		parts = append(parts, "daily_cost_usd="+b.DailyCost.String())
	}
	add("hourly_requests", b.HourlyRequests)
	add("daily_requests", b.DailyRequests)
	add("daily_tokens", b.DailyTokens)
	add("hourly_tool_calls", b.HourlyTools)
	add("high_risk_calls", b.HighRiskCalls)
	return "remaining: " + strings.Join(parts, " ") + "\n"
}

func formatDetails(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		b, _ := json.Marshal(d[k])
		parts = append(parts, k+"="+string(b))
	}
	return strings.Join(parts, " ")
}

// formatEvent renders events other than decisions.
func formatEvent(ev *Event) string {
	switch ev.Type {
	case EvCommandRejected:
		s := fmt.Sprintf("REJECTED %s: %s\n", ev.Error.Code, ev.Error.Message)
		if len(ev.Error.Details) > 0 {
			s += "details: " + formatDetails(ev.Error.Details) + "\n"
		}
		return s
	case EvTrustChanged:
		return fmt.Sprintf("trust: %d -> %d (%s)\n", ev.TrustChanged.From, ev.TrustChanged.To, ev.TrustChanged.Reason)
	case EvAgentStatusChanged:
		return fmt.Sprintf("status: %s (%s)\n", ev.Status.Status, ev.Status.Reason)
	case EvApprovalsExpired:
		var s strings.Builder
		for _, x := range ev.Expired.Approvals {
			fmt.Fprintf(&s, "expired %s %s", x.Approval.Kind, x.Approval.ID)
			if x.ReleasedCost != 0 || x.ReleasedTokens != 0 {
				fmt.Fprintf(&s, " released cost=%s tokens=%d", x.ReleasedCost, x.ReleasedTokens)
			}
			s.WriteString("\n")
		}
		return s.String()
	}
	return string(ev.Type) + "\n"
}
