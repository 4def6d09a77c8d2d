package domain

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The fast path of the request digests (fastdigest.go) must give exactly
// the digests of the general path (raw JSON canonicalized by jcs) whenever
// it answers, and leave to the general path whatever it does not answer.
// These tests compare the two on many generated requests; a fast path that
// ever diverges fails them.

// digestOutcome is what one path says about one request.
type digestOutcome struct {
	d   digests
	id  string
	err error
}

// checkActionPaths compares the two paths on v and reports whether the
// fast path answered.
func checkActionPaths(t *testing.T, seed uint64, v *VerifyAction) bool {
	t.Helper()
	req := RequestID{Source: "src", ID: "r1"}
	var gen digestOutcome
	gen.d, gen.id, gen.err = actionDigestsGeneral(v, req)
	d, id, ok := actionDigestsFast(v, req)
	if ok {
		if gen.err != nil {
			t.Fatalf("seed %d: the fast path accepted what the general path rejects (%v):\n%#v", seed, gen.err, *v)
		}
		if d != gen.d || id != gen.id {
			t.Fatalf("seed %d: fast path %+v %s, general path %+v %s, for\n%#v", seed, d, id, gen.d, gen.id, *v)
		}
	}
	// Whatever the path, actionDigests (what Decide calls) answers as the
	// general path does.
	ad, aid, aerr := actionDigests(v, req)
	if ad != gen.d || aid != gen.id || (aerr == nil) != (gen.err == nil) || (aerr != nil && aerr.Error() != gen.err.Error()) {
		t.Fatalf("seed %d: actionDigests %+v %s %v, general %+v %s %v", seed, ad, aid, aerr, gen.d, gen.id, gen.err)
	}
	return ok
}

func checkToolPaths(t *testing.T, seed uint64, v *VerifyToolCall) bool {
	t.Helper()
	req := RequestID{Source: "src", ID: "r2"}
	var gen digestOutcome
	gen.d, gen.id, gen.err = toolDigestsGeneral(v, req)
	d, id, ok := toolDigestsFast(v, req)
	if ok {
		if gen.err != nil {
			t.Fatalf("seed %d: the fast path accepted what the general path rejects (%v):\n%#v", seed, gen.err, *v)
		}
		if d != gen.d || id != gen.id {
			t.Fatalf("seed %d: fast path %+v %s, general path %+v %s, for\n%#v", seed, d, id, gen.d, gen.id, *v)
		}
	}
	td, tid, terr := toolDigests(v, req)
	if td != gen.d || tid != gen.id || (terr == nil) != (gen.err == nil) || (terr != nil && terr.Error() != gen.err.Error()) {
		t.Fatalf("seed %d: toolDigests %+v %s %v, general %+v %s %v", seed, td, tid, terr, gen.d, gen.id, gen.err)
	}
	return ok
}

// fixedStrings are strings that exercise every escape and encoding case:
// quotes, backslashes, every kind of control character, DEL, U+2028,
// multi-byte and supplementary characters, U+FFFD written as such, a BOM,
// and invalid UTF-8 (a stray byte, a truncated sequence, an encoded
// surrogate, an overlong form).
var fixedStrings = []string{
	"", "a", "calculate", "2+2", "tool_call", "q\"<>&\u2028\x01", "\x00\x1f\x7f", "\b\f\n\r\t", "\\", "/", "\\/",
	"é", "e\u0301", "😀", "日本語", "\ufffd", "\ufeff", "\u007f\u0080\u07ff\u0800\uffff", "\U0010ffff",
	"\xff", "a\xc3", "\xed\xa0\x80", "\xc0\xaf", `{"json":"inside"}`, `\u0041`, strings.Repeat("long ", 300),
}

// randomString draws a string from a mix of all those cases.
func randomString(rng *rand.Rand) string {
	if rng.IntN(3) == 0 {
		return fixedStrings[rng.IntN(len(fixedStrings))]
	}
	parts := []string{"a", "Z", "0", " ", "\"", "\\", "\x00", "\x08", "\x0c", "\n", "\x1b", "\x7f", "é", "€", "😀", "\u2028", "/"}
	if rng.IntN(10) == 0 {
		parts = append(parts, "\xff", "\xe2\x82")
	}
	var b strings.Builder
	for n := rng.IntN(12); n > 0; n-- {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// fixedParams are raw parameter texts: non-canonical spellings (member
// order, whitespace, escapes, numbers such as 1.0, 1e21, -0, 1E2), names
// that sort differently in UTF-16 and UTF-8, duplicate names (also after
// unescaping), invalid JSON, text that is not one JSON value but would
// parse inside the hand-written body, and nesting at the depth limit.
var fixedParams = []string{
	``, `null`, `{}`, `[]`, `true`, `"s"`, `0`, `-0`, `-0.0`, `1.0`, `1e21`, `1E2`, `1e-7`, `0.000001`,
	`123456789012345678901`, `9007199254740993`, `{"b":1,"a":2}`, ` { "z" : [ 1 , 2 ] , "a" : null } `,
	`{"precision":2,"mode":"exact"}`, `{"a":1.0,"b":1e21,"c":-0,"d":1E2,"e":0.000001,"f":1e-7,"g":5e-324}`,
	`{"a":{"c":3,"b":[{"y":1,"x":2}]}}`, `{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
	`"\u0041\/\u00e9\ud83d\ude00\u001f\u007f"`, `{"k":"\u0000\b\f"}`, `{"a":1,"a":2}`, `{"\u00e9":1,"é":2}`,
	`1,"x":2`, `{"a":1}garbage`, `[1e400]`, `NaN`, `"\ud800"`, "\"\xff\"", `{"a":}`, `  `, `[1,]`, `01`,
	strings.Repeat("[", 61) + strings.Repeat("]", 61), strings.Repeat("[", 62) + strings.Repeat("]", 62),
	strings.Repeat("[", 63) + strings.Repeat("]", 63), strings.Repeat("[", 64) + strings.Repeat("]", 64),
	`{"deep":` + strings.Repeat("[", 61) + strings.Repeat("]", 61) + `}`,
}

// randomJSON writes a random JSON value, with whitespace, unsorted and
// sometimes duplicate names, every number spelling and escaped strings.
func randomJSON(rng *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		if rng.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[rng.IntN(4)])
		}
	}
	ws()
	k := rng.IntN(8)
	if depth > 3 {
		k = 2 + rng.IntN(6)
	}
	switch k {
	case 0:
		b.WriteByte('{')
		names := []string{"a", "b", "B", "é", `\u00e9`, "😀", "\ufb33", "mode", "precision", "", `\"`}
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			b.WriteString(`"` + names[rng.IntN(len(names))] + `"`)
			ws()
			b.WriteByte(':')
			randomJSON(rng, b, depth+1)
		}
		ws()
		b.WriteByte('}')
	case 1:
		b.WriteByte('[')
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(rng, b, depth+1)
		}
		b.WriteByte(']')
	case 2, 3:
		nums := []string{"0", "-0", "1", "-1", "1.0", "1.50", "1e21", "1E+21", "1e20", "-1e-7", "0.1", "123456789012345",
			"1234567890123456", "12345678901234567", "9007199254740993", "2e-323", "1.7976931348623157e308", "0.000001", "100e-2"}
		if rng.IntN(2) == 0 {
			b.WriteString(nums[rng.IntN(len(nums))])
		} else {
			b.WriteString(strconv.FormatInt(rng.Int64()>>rng.IntN(63), 10))
		}
	case 4, 5:
		s, _ := json.Marshal(randomString(rng))
		b.Write(s)
	case 6:
		b.WriteString(`"\u00e9\/\b\ud83d\ude00\u2028"`)
	default:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	}
	ws()
}

func randomParams(rng *rand.Rand) json.RawMessage {
	if rng.IntN(3) == 0 {
		return json.RawMessage(fixedParams[rng.IntN(len(fixedParams))])
	}
	var b strings.Builder
	randomJSON(rng, &b, 0)
	return json.RawMessage(b.String())
}

var fixedSteps = []string{"", "1", "2", "0", "01", "1.0", "1e2", "-1", "+1", " 1", "9007199254740992", "9007199254740993",
	"999999999999999", "1000000000000000", "12345678901234567", "99999999999999999999", "NaN", "1_000"}

func randomStep(rng *rand.Rand) json.Number {
	if rng.IntN(2) == 0 {
		return json.Number(fixedSteps[rng.IntN(len(fixedSteps))])
	}
	return json.Number(strconv.FormatUint(rng.Uint64()>>rng.IntN(64), 10))
}

func randomUSD(rng *rand.Rand) USD {
	switch rng.IntN(6) {
	case 0:
		return []USD{0, 1, 10, 100_000, 1_500_001, MicrosPerUSD, maxUSD, maxUSD - 1, maxUSD + 1, -1, math.MinInt64, math.MaxInt64}[rng.IntN(12)]
	case 1:
		return USD(rng.Int64N(int64(maxUSD))) + 1
	case 2:
		return USD(rng.Int64N(1000)) * USD([]int64{1, 10, 100, 1000, 10_000, 100_000, MicrosPerUSD}[rng.IntN(7)])
	case 3:
		return USD(rng.Int64())
	}
	return 0
}

func randomTokens(rng *rand.Rand) int64 {
	switch rng.IntN(4) {
	case 0:
		return []int64{0, 1, -1, 150, 1 << 53, 1<<53 + 1, -(1 << 53), -(1<<53 + 1), 1<<53 + 3, math.MaxInt64, math.MinInt64}[rng.IntN(11)]
	case 1:
		return rng.Int64() >> rng.IntN(63)
	case 2:
		return -(rng.Int64() >> rng.IntN(63))
	}
	return 0
}

func randomContext(rng *rand.Rand) ActionContext {
	c := ActionContext{ConversationID: randomString(rng), StepNumber: randomStep(rng)}
	if rng.IntN(2) == 0 {
		c.UserIntent = randomString(rng)
	}
	if rng.IntN(2) == 0 {
		c.PreActionStateHash = strings.Repeat("ab", 32)
		if rng.IntN(3) == 0 {
			c.PreActionStateHash = randomString(rng)
		}
	}
	if rng.IntN(2) == 0 {
		c.StateSource = []string{"file_tree", "custom", randomString(rng)}[rng.IntN(3)]
	}
	return c
}

func randomOptions(rng *rand.Rand) Options {
	o := Options{RequireAttestation: rng.IntN(2) == 0}
	if rng.IntN(2) == 0 {
		o.RiskThreshold = []string{"low", "high", randomString(rng)}[rng.IntN(3)]
	}
	return o
}

func optional(rng *rand.Rand) string {
	if rng.IntN(2) == 0 {
		return ""
	}
	return randomString(rng)
}

// TestFastDigestsMatchGeneralPath generates 30,000 verify_action and tool
// call requests and checks that the fast path, whenever it answers, gives
// the general path's fingerprint, state fingerprint, request digest and
// action ID, and never accepts what the general path rejects. It also
// requires the fast path to answer for most valid requests, so that a fast
// path that silently always gave up would fail too. Reproduce a failure
// from the printed seed.
func TestFastDigestsMatchGeneralPath(t *testing.T) {
	const n = 15000
	for _, seed := range []uint64{1, 8785, 20261124} {
		rng := rand.New(rand.NewPCG(seed, 2))
		fast, valid := 0, 0
		for i := 0; i < n/3; i++ {
			v := &VerifyAction{
				Action: Action{Type: randomString(rng), Query: optional(rng), Code: optional(rng), Target: optional(rng),
					EstimatedCost: randomUSD(rng), EstimatedTokens: randomTokens(rng), Output: optional(rng)},
				Context: randomContext(rng), Options: randomOptions(rng),
			}
			if rng.IntN(3) != 0 {
				v.Action.Parameters = randomParams(rng)
			}
			if checkActionPaths(t, seed, v) {
				fast++
			}
			if _, _, err := actionDigestsGeneral(v, RequestID{}); err == nil {
				valid++
			}
			tc := &VerifyToolCall{
				ToolCall:      ToolCall{ToolName: randomString(rng), EstimatedCost: randomUSD(rng), EstimatedTokens: randomTokens(rng)},
				Justification: optional(rng), Options: randomOptions(rng),
			}
			if rng.IntN(3) != 0 {
				tc.ToolCall.Parameters = randomParams(rng)
			}
			if rng.IntN(2) == 0 {
				c := randomContext(rng)
				tc.Context = &c
			}
			if checkToolPaths(t, seed, tc) {
				fast++
			}
			if _, _, err := toolDigestsGeneral(tc, RequestID{}); err == nil {
				valid++
			}
		}
		// Steps, amounts and strings are drawn wide, so a fair share of the
		// valid requests falls back; but most must take the fast path.
		if fast < valid/3 {
			t.Fatalf("seed %d: the fast path answered %d of %d valid requests", seed, fast, valid)
		}
		t.Logf("seed %d: fast path answered %d of %d valid requests (of %d)", seed, fast, valid, 2*(n/3))
	}
}

// TestFastDigestsTakenForOrdinaryRequests pins that the requests the gate
// sees every day (the QWED-Agent user guide's example, parameters, estimates, state hash,
// options, tool calls) take the fast path, with the general path's digests.
func TestFastDigestsTakenForOrdinaryRequests(t *testing.T) {
	hash := strings.Repeat("0123456789abcdef", 4)
	actions := []*VerifyAction{
		{Action: Action{Type: "calculate", Query: "2+2"}, Context: ActionContext{ConversationID: "conv_1", StepNumber: "2"}},
		{Action: Action{Type: "calculate", Query: "2+2", Parameters: json.RawMessage(`{"precision":2,"mode":"exact"}`), EstimatedTokens: 150},
			Context: ActionContext{ConversationID: "conv_7", StepNumber: "2", UserIntent: "add two numbers"}},
		{Action: Action{Type: "write_file", Target: "/tmp/é.txt", Code: "print(\"hi\")\n", EstimatedCost: 1_500_001},
			Context: ActionContext{ConversationID: "c", StepNumber: "9007199254740992", PreActionStateHash: hash, StateSource: "git_tree"},
			Options: Options{RequireAttestation: true, RiskThreshold: "medium"}},
		{Action: Action{Type: "sql_query", Query: "SELECT 1", Parameters: json.RawMessage(` {"b": [1.0, 1e21, -0], "a": "\u00e9"} `)},
			Context: ActionContext{ConversationID: "c", StepNumber: "3"}, Options: Options{RiskThreshold: "low"}},
		{Action: Action{Type: "send_email", Parameters: json.RawMessage(`{"to":"a@example.com"}`), Output: "Dear customer,\n\tyour order shipped é"},
			Context: ActionContext{ConversationID: "c", StepNumber: "4"}},
	}
	for i, v := range actions {
		if !checkActionPaths(t, uint64(i), v) {
			t.Errorf("action %d did not take the fast path: %#v", i, *v)
		}
	}
	tools := []*VerifyToolCall{
		{ToolCall: ToolCall{ToolName: "read_file"}},
		{ToolCall: ToolCall{ToolName: "web_search", Parameters: json.RawMessage(`{"q":"x"}`), EstimatedCost: 3, EstimatedTokens: 2},
			Justification: "why", Context: &ActionContext{ConversationID: "c", StepNumber: "1", PreActionStateHash: hash, StateSource: "custom"},
			Options: Options{RequireAttestation: true}},
	}
	for i, v := range tools {
		if !checkToolPaths(t, uint64(i), v) {
			t.Errorf("tool call %d did not take the fast path: %#v", i, *v)
		}
	}
}

// TestFastDigestsAmountsAndSteps compares the fast path's numbers with jcs
// on every amount from 1 to 10^4 micro-dollars and those times 100, on
// random amounts up to maxUSD and on the edges, and its step check on the
// edges of 2^53.
func TestFastDigestsAmountsAndSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	check := func(u USD) {
		v := &VerifyAction{Action: Action{Type: "t", EstimatedCost: u}, Context: ActionContext{ConversationID: "c", StepNumber: "1"}}
		if !checkActionPaths(t, uint64(u), v) {
			t.Fatalf("amount %d (%s) left the fast path", u, u)
		}
	}
	for u := USD(1); u <= 10_000; u++ {
		check(u)
		check(u * 100) // every pattern of the upper fractional digits too
	}
	for i := 0; i < 20000; i++ {
		check(USD(rng.Int64N(int64(maxUSD))) + 1)
	}
	for _, u := range []USD{maxUSD, maxUSD - 1, maxUSD / 3, 999_999_999_999_999, 100_000_000_000_001} {
		check(u)
	}
	for _, s := range []string{"1", "0", "9", "10", "999999999999999", "1000000000000000", "9007199254740991", "9007199254740992"} {
		if !canonicalStep(json.Number(s)) {
			t.Errorf("step %s: not canonical", s)
		}
	}
	for _, s := range []string{"", "01", "00", "-1", "1.0", "1e3", "9007199254740993", "9999999999999999", "10000000000000000", " 1"} {
		if canonicalStep(json.Number(s)) {
			t.Errorf("step %s: canonical", s)
		}
	}
}

// FuzzFastDigests compares the two paths on fuzzed fields.
func FuzzFastDigests(f *testing.F) {
	for i, p := range fixedParams {
		s := fixedStrings[i%len(fixedStrings)]
		f.Add(s, fixedStrings[(i+3)%len(fixedStrings)], p, fixedSteps[i%len(fixedSteps)], int64(i*1_000_003), int64(i)<<(i%64), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, typ, query, params, step string, cost, tokens int64, tool bool) {
		ctx := ActionContext{ConversationID: query, StepNumber: json.Number(step), UserIntent: typ}
		if tool {
			checkToolPaths(t, 0, &VerifyToolCall{ToolCall: ToolCall{ToolName: typ, Parameters: json.RawMessage(params),
				EstimatedCost: USD(cost), EstimatedTokens: tokens}, Justification: query, Context: &ctx})
			return
		}
		checkActionPaths(t, 0, &VerifyAction{Action: Action{Type: typ, Query: query, Code: step, Parameters: json.RawMessage(params),
			EstimatedCost: USD(cost), EstimatedTokens: tokens, Output: typ}, Context: ctx})
	})
}
