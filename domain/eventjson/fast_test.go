package eventjson

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readHistory returns the payloads of testdata/seeded-history.jsonl.gz:
// every event a seeded run of the real worker wrote (the 500 random
// commands of handlers' TestDesign2_1_SeededRunThroughTheWorker, seed 1:
// decisions approved, denied and pending, tool calls, executions,
// rejections, registrations, trust changes, suspensions, resolutions,
// expiries and log checkpoints), one per line as the log stored them.
func readHistory(tb testing.TB) [][]byte {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "seeded-history.jsonl.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// sameAsStandardLibrary checks that DecodeEvent(p) decodes the event
// encoding/json decodes (see sameAsOracle) whenever it decodes p, and
// reports whether it did. Where it refuses p, encoding/json may accept it:
// a repeated member, a key in another case, a quoted number or a null
// where the encoder writes none are not the v1 format.
func sameAsStandardLibrary(t testing.TB, p []byte) (decoded bool) {
	t.Helper()
	if _, err := DecodeEvent(p); err != nil {
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(p) {
			t.Fatalf("DecodeEvent(%q): error %v", p, err)
		}
		return false
	}
	sameAsOracle(t, p)
	return true
}

// Every event of a recorded history decodes as encoding/json decodes it,
// and every one of them on the fast path (they are all of the frequent
// shapes); re-encoding it gives back the recorded bytes.
func TestDecodeEventMatchesStandardLibraryOnRecordedHistory(t *testing.T) {
	history := readHistory(t)
	if len(history) < 400 {
		t.Fatalf("the recorded history has %d events", len(history))
	}
	types := map[string]int{}
	for _, p := range history {
		if !sameAsStandardLibrary(t, p) {
			t.Errorf("%s does not decode", p)
		}
		ev, _ := DecodeEvent(p)
		types[string(ev.Type)]++
		again, err := Marshal(ev)
		if err != nil || !bytes.Equal(again, p) {
			t.Errorf("re-encoding gives\n%s\nwant\n%s (%v)", again, p, err)
		}
	}
	for _, typ := range []string{"action.decided", "execution.logged", "log.checkpointed", "command.rejected",
		"agent.registered", "approval.resolved", "trust.changed", "agent.status_changed", "approvals.expired"} {
		if types[typ] == 0 {
			t.Errorf("the recorded history has no %s event (%v)", typ, types)
		}
	}
}

// edit returns the typical approved event with old replaced by new
// (which must occur in it).
func edit(t testing.TB, old, new string) []byte {
	t.Helper()
	p := benchEvent(t, "approved")
	if !bytes.Contains(p, []byte(old)) {
		t.Fatalf("the typical event has no %q", old)
	}
	return bytes.Replace(p, []byte(old), []byte(new), 1)
}

// edgeCase is a hand-written input; fast says whether the decoder
// accepts it (then decoding it as encoding/json does) or refuses it.
type edgeCase struct {
	name string
	p    []byte
	fast bool
}

// edgeCases are variations of the typical event around everything the
// fast path must decode as encoding/json does or leave to it.
func edgeCases(t testing.TB) []edgeCase {
	return []edgeCase{
		{"typical", edit(t, "", ""), true},
		{"escapes", edit(t, `"query":"2"`, `"query":"a\"b\\c\/d\b\f\n\r\t\u0000\u001f\u00e9\u65e5\ud83d\ude00"`), true},
		{"unicode bytes", edit(t, `"query":"2"`, "\"query\":\"é日本😀\u2028\""), true},
		{"html escaped", edit(t, `"query":"2"`, `"query":"a \u003c b \u0026\u0026 c \u003e d \u2028\u2029"`), true},
		{"invalid utf-8", edit(t, `"query":"2"`, "\"query\":\"a\xffb\xc3\x28c\xed\xa0\x80d\xf4\x90\x80\x80\""), true},
		{"lone surrogates", edit(t, `"query":"2"`, `"query":"\ud800x\udc00\ud800\u0041\ud800\ud800\udbff"`), true},
		{"escapes in a key", edit(t, `"query":"2"`, `"q\u0075ery":"2"`), false},
		{"bad escape", edit(t, `"query":"2"`, `"query":"\x"`), false},
		{"short unicode escape", edit(t, `"query":"2"`, `"query":"\u12"`), false},
		{"control byte", edit(t, `"query":"2"`, "\"query\":\"a\tb\""), false},
		{"whitespace", bytes.ReplaceAll(edit(t, "", ""), []byte(","), []byte(" ,\n\t\r ")), true},
		{"indented", indent(t, edit(t, "", "")), true},
		{"reordered keys", edit(t, `{"seq":3,"prev":"7d41887935017930d505114fd1055a710795d65006aa28dfef6a1af2fa3f6fea",`, `{"prev":"7d41887935017930d505114fd1055a710795d65006aa28dfef6a1af2fa3f6fea","seq":3,`), true},
		{"command after decided", edit(t, `"type":"action.decided","command"`, `"command":{},"type":"action.decided","comman"`), true},
		{"duplicate seq", edit(t, `"seq":3,`, `"seq":3,"seq":4,`), false},
		{"duplicate decided", edit(t, `"decided":{`, `"decided":{"step":7,"tool":"t"},"decided":{`), false},
		{"duplicate budget", edit(t, `"budget_remaining":{`, `"budget_remaining":{"daily_cost_usd":1,"daily_tokens":5},"budget_remaining":{`), false},
		{"case-different key", edit(t, `"seq":3`, `"Seq":3`), false},
		{"case-different nested key", edit(t, `"decision":`, `"DECISION":`), false},
		{"kelvin sign key", edit(t, `"kind":"action"`, "\"\u212aind\":\"action\""), false},
		{"unknown key", edit(t, `"seq":3`, `"seq":3,"extra":[1,{"a":null,"B":"\u00e9"}]`), true},
		{"unknown key in another case of a field", edit(t, `"seq":3`, `"seq":3,"PREV":"x"`), false},
		{"unknown key with an escape", edit(t, `"seq":3`, `"seq":3,"e\u0078tra":1`), false},
		{"unknown key with unicode", edit(t, `"seq":3`, "\"seq\":3,\"\u00e9\":1"), false},
		{"unknown key with a bad value", edit(t, `"seq":3`, `"seq":3,"extra":[1,]`), false},
		{"unknown key with a deep value", edit(t, `"seq":3`, `"seq":3,"extra":`+deep(100)), false},
		{"unknown key with whitespace", edit(t, `"seq":3`, "\"seq\":3, \"extra\" : { } "), true},
		{"indented unknown keys", indent(t, edit(t, `"seq":3`, `"seq":3,"Extra_Key-2":{"a":[true,null]}`)), true},
		{"repeated unknown key", edit(t, `"seq":3`, `"seq":3,"extra":1,"extra":2`), true},
		{"null tools", []byte(`{"type":"principal.tools_set","tool_registry":{"principal_id":"p","tools":null}}`), true},
		{"null approvals", []byte(`{"type":"approvals.expired","expired":{"approvals":null}}`), true},
		{"null findings", []byte(`{"type":"action.decided","decided":{"verification":{"findings":null}}}`), true},
		{"quoted amount", benchEvent(t, "fallback"), false},
		{"member of a newer version", edit(t, `"step_consumed":true,`, `"step_consumed":true,"policy_version":"2027-01",`), true},
		{"null command", edit(t, `"command":{`, `"command":null,"x":{`), false},
		{"null prev", edit(t, `"prev":"7d41887935017930d505114fd1055a710795d65006aa28dfef6a1af2fa3f6fea"`, `"prev":null`), false},
		{"null checks", edit(t, `"checks_passed":[`, `"checks_passed":null,"checks_failed":[`), true},
		{"null step", edit(t, `"step":2`, `"step":null`), false},
		{"null usd", edit(t, `"reserved_cost_usd":0.01`, `"reserved_cost_usd":null`), false},
		{"null usd pointer", edit(t, `"daily_cost_usd":99.98`, `"daily_cost_usd":null`), false},
		{"null risk", edit(t, `"risk_level":"low"`, `"risk_level":null`), false},
		{"null time", edit(t, `"time":"2026-11-01T10:00:00Z"`, `"time":null`), false},
		{"null parameters", edit(t, `"query":"2"`, `"query":"2","parameters":null`), true},
		{"parameters", edit(t, `"query":"2"`, `"query":"2","parameters":{"a": [1, 2.5e3, "x\u00e9", true, false, null, {}]}`), true},
		{"deep parameters", edit(t, `"query":"2"`, `"query":"2","parameters":`+deep(200)), false},
		{"too deep parameters", edit(t, `"query":"2"`, `"query":"2","parameters":`+deep(10001)), false},
		{"upper-case risk", edit(t, `"risk_level":"low"`, `"risk_level":"LOW"`), true},
		{"unknown risk", edit(t, `"risk_level":"low"`, `"risk_level":"lowish"`), false},
		{"empty checks", edit(t, `"checks_passed":["context_valid","within_step_limit","no_replay","no_repetition","action_type_known","engine_allowed","trust_sufficient","within_budget"]`, `"checks_passed":[]`), true},
		{"many checks", edit(t, `"checks_passed":[`, `"checks_passed":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q","r",`), true},
		{"trailing comma in array", edit(t, `"within_budget"]`, `"within_budget",]`), false},
		{"trailing comma in object", edit(t, `"options":{}`, `"options":{"require_attestation":true,}`), false},
		{"huge seq", edit(t, `"seq":3`, `"seq":18446744073709551616`), false},
		{"largest seq", edit(t, `"seq":3`, `"seq":18446744073709551615`), true},
		{"negative seq", edit(t, `"seq":3`, `"seq":-3`), false},
		{"fractional seq", edit(t, `"seq":3`, `"seq":3.0`), false},
		{"exponent seq", edit(t, `"seq":3`, `"seq":3e0`), false},
		{"leading zero", edit(t, `"seq":3`, `"seq":03`), false},
		{"huge partition", edit(t, `"partition":0`, `"partition":2147483648`), false},
		{"smallest partition", edit(t, `"partition":0`, `"partition":-2147483648`), true},
		{"negative step", edit(t, `"step":2`, `"step":-2`), true},
		{"smallest step", edit(t, `"step":2`, `"step":-9223372036854775808`), true},
		{"huge step", edit(t, `"step":2`, `"step":9223372036854775808`), false},
		{"fractional step", edit(t, `"step":2`, `"step":2.5`), false},
		{"negative zero step", edit(t, `"step":2`, `"step":-0`), true},
		{"fractional step number", edit(t, `"step_number":2`, `"step_number":-2.5e-7`), true},
		{"huge step number", edit(t, `"step_number":2`, `"step_number":1e400`), true},
		{"quoted step number", edit(t, `"step_number":2`, `"step_number":"2"`), false},
		{"bad quoted step number", edit(t, `"step_number":2`, `"step_number":"two"`), false},
		{"exponent amount", edit(t, `"estimated_cost_usd":0.01`, `"estimated_cost_usd":1e-2`), true},
		{"quoted amount", edit(t, `"estimated_cost_usd":0.01`, `"estimated_cost_usd":"0.01"`), false},
		{"huge amount", edit(t, `"estimated_cost_usd":0.01`, `"estimated_cost_usd":1e400`), false},
		{"too precise amount", edit(t, `"estimated_cost_usd":0.01`, `"estimated_cost_usd":0.0000001`), true},
		{"negative amount", edit(t, `"estimated_cost_usd":0.01`, `"estimated_cost_usd":-12345678.5`), true},
		{"string for a number", edit(t, `"step":2`, `"step":"2"`), false},
		{"number for a string", edit(t, `"kind":"action"`, `"kind":1`), false},
		{"bool for a string", edit(t, `"kind":"action"`, `"kind":true`), false},
		{"object for a bool", edit(t, `"step_consumed":true`, `"step_consumed":{}`), false},
		{"bad literal", edit(t, `"step_consumed":true`, `"step_consumed":tru`), false},
		{"time with offset", edit(t, `"time":"2026-11-01T10:00:00Z"`, `"time":"2026-11-01T12:00:00.123456789+02:00"`), true},
		{"bad time", edit(t, `"time":"2026-11-01T10:00:00Z"`, `"time":"2026-11-01"`), false},
		{"escaped time", edit(t, `"time":"2026-11-01T10:00:00Z"`, `"time":"2026-11-01T10:00:00\u005a"`), false},
		{"missing decided", edit(t, `,"decided":{`, `,"x":{`), true},
		{"missing fields", []byte(`{"seq":1,"type":"action.decided","decided":{"decision":"DENIED"}}`), true},
		{"empty object", []byte(`{}`), true},
		{"empty input", []byte(``), false},
		{"whitespace only", []byte(" \n"), false},
		{"null", []byte(`null`), false},
		{"array", []byte(`[]`), false},
		{"string", []byte(`"x"`), false},
		{"trailing garbage", edit(t, `}}}`, `}}}x`), false},
		{"trailing object", edit(t, `}}}`, `}}}{}`), false},
		{"trailing whitespace", edit(t, `}}}`, "}}}\n\t "), true},
		{"leading whitespace", append([]byte("\n "), edit(t, "", "")...), true},
		{"nul after", edit(t, `}}}`, "}}}\x00"), false},
		{"details", edit(t, `"decided":{`, `"error":{"code":"QWED-AGENT-BUDGET-001","message":"m","details":{"a":1,"b":"x","c":true,"d":null,"e":[1,"y",[]],"f":{"g":-0.5e3},"a":2,"\u00e9":"\ud800"}},"decided":{`), true},
		{"empty details", edit(t, `"decided":{`, `"error":{"code":"X","message":"m","details":{}},"decided":{`), true},
		{"null details", edit(t, `"decided":{`, `"error":{"code":"X","message":"m","details":null},"decided":{`), false},
		{"array details", edit(t, `"decided":{`, `"error":{"code":"X","message":"m","details":[1]},"decided":{`), false},
		{"huge detail number", edit(t, `"decided":{`, `"error":{"code":"X","message":"m","details":{"a":1e999}},"decided":{`), true},
		{"trust level names", []byte(`{"type":"trust.changed","trust_changed":{"from":"Supervised","to":"3","reason":"r"}}`), true},
		{"trust level digits", []byte(`{"type":"trust.changed","trust_changed":{"from":1,"to":3,"reason":"r"}}`), true},
		{"trust level out of range", []byte(`{"type":"trust.changed","trust_changed":{"from":4,"to":3}}`), false},
		{"trust level fraction", []byte(`{"type":"trust.changed","trust_changed":{"from":1.0,"to":3}}`), false},
		{"trust level leading zero", []byte(`{"type":"trust.changed","trust_changed":{"from":01,"to":3}}`), false},
		{"tick with a member", []byte(`{"type":"approvals.expired","command":{"type":"qwed.gate.tick","tick":{"x":1}}}`), true},
		{"empty tick", []byte(`{"type":"approvals.expired","command":{"type":"qwed.gate.tick","tick":{}},"expired":{"approvals":[]}}`), true},
		{"flat budget", []byte(`{"type":"agent.registered","registered":{"agent_id":"a","budget":{"max_daily_cost_usd":5,"max_requests_per_hour":3}}}`), true},
		{"nested budget", []byte(`{"type":"agent.registered","registered":{"agent_id":"a","budget":{"cost":{"max_daily_usd":5},"requests":{"max_per_hour":3}}}}`), false},
		{"bad budget", []byte(`{"type":"agent.registered","registered":{"agent_id":"a","budget":{"nope":1}}}`), false},
		{"null budget", []byte(`{"type":"agent.registered","registered":{"agent_id":"a","budget":null}}`), true},
		{"checkpoint interval", []byte(`{"type":"log.checkpointed","checkpoint":{"seq":1,"head":"h","next":{"events":5,"interval":"1h30m"},"signature":"s"}}`), true},
		{"bad checkpoint interval", []byte(`{"type":"log.checkpointed","checkpoint":{"next":{"interval":"soon"}}}`), false},
		{"a2a digest and global", []byte(`{"type":"command.rejected","command":{"type":"x","a2a_digest":"sha256:ab","global":true}}`), true},
		{"global and a2a digest", []byte(`{"type":"command.rejected","command":{"type":"x","global":true,"a2a_digest":"sha256:ab"}}`), true},
		{"duplicate a2a digest", []byte(`{"type":"command.rejected","command":{"type":"x","a2a_digest":"a","a2a_digest":"b"}}`), false},
		{"duplicate global", []byte(`{"type":"command.rejected","command":{"type":"x","global":false,"global":true}}`), false},
		{"numeric checkpoint interval", []byte(`{"type":"log.checkpointed","checkpoint":{"next":{"interval":5}}}`), false},
	}
}

// Hand-written edge cases decode exactly as encoding/json decodes them, or
// are refused, as the case expects.
func TestDecodeEventEdgeCasesMatchStandardLibrary(t *testing.T) {
	for _, c := range edgeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			if decoded := sameAsStandardLibrary(t, c.p); decoded != c.fast {
				t.Errorf("decoded %v, want %v", decoded, c.fast)
			}
		})
	}
}

// Every prefix of a typical event is refused.
func TestDecodeEventTruncatedFails(t *testing.T) {
	for _, name := range []string{"approved", "denied", "executed", "fallback"} {
		p := benchEvent(t, name)
		for i := range p {
			if sameAsStandardLibrary(t, p[:i]) {
				t.Fatalf("DecodeEvent accepted %q", p[:i])
			}
		}
	}
}

func indent(t testing.TB, p []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, p, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// deep returns n nested arrays around a number.
func deep(n int) string {
	return strings.Repeat("[", n) + "1" + strings.Repeat("]", n)
}

// plainEnd finds the first byte that is not plain, wherever it is in a
// word and whatever surrounds it.
func TestPlainEndFindsTheFirstSpecialByte(t *testing.T) {
	for n := 0; n < 20; n++ {
		for at := 0; at <= n; at++ {
			for c := range 256 {
				p := bytes.Repeat([]byte("a~ "), n)[:n]
				want := n
				if at < n {
					p[at] = byte(c)
					if !plain[c] {
						want = at
					}
				}
				if got := plainEnd(p, 0); got != want {
					t.Fatalf("plainEnd(%q) = %d, want %d", p, got, want)
				}
			}
		}
	}
}

// The decoder decodes the typical decision in 10 allocations (the
// general decoders took 72): one block for the event and its structs, one
// per string it keeps (the chain hash, the agent, its token hash, the
// request source, the conversation, the action ID, the two digests) and
// the list of checks. The budget denial adds its errors (message, details
// map and values, a number's text and its box; the decision's copy shares
// the event's values): 26; the
// execution log takes 7.
func TestDecodeFastAllocations(t *testing.T) {
	for _, c := range []struct {
		name string
		max  float64
	}{{"approved", 10}, {"denied", 26}, {"executed", 7}} {
		p := benchEvent(t, c.name)
		if _, err := DecodeEvent(p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := testing.AllocsPerRun(100, func() { _, _ = DecodeEvent(p) }); n > c.max {
			t.Errorf("%s: %v allocations, want at most %v", c.name, n, c.max)
		}
	}
}
