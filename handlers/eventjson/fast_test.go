package eventjson

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentgate/agentgate/domain"
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

// sameAsStandardLibrary checks that DecodeEvent(p) errs exactly when
// encoding/json does, and otherwise decodes the same event; it reports
// whether the fast path decoded p.
func sameAsStandardLibrary(t testing.TB, p []byte) (fast bool) {
	t.Helper()
	var want domain.Event
	wantErr := json.Unmarshal(p, &want)
	got, err := DecodeEvent(p)
	switch {
	case (err != nil) != (wantErr != nil):
		t.Fatalf("DecodeEvent(%q): error %v, encoding/json: %v", p, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, &want):
		t.Fatalf("DecodeEvent(%q) =\n%#v\nencoding/json:\n%#v", p, got, &want)
	}
	fastEv, fast := DecodeFast(p)
	if fast && (wantErr != nil || !reflect.DeepEqual(fastEv, &want)) {
		t.Fatalf("DecodeFast(%q) = %#v, encoding/json: %#v, %v", p, fastEv, &want, wantErr)
	}
	return fast
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
			t.Errorf("%s took the fallback", p)
		}
		ev, _ := DecodeEvent(p)
		types[string(ev.Type)]++
		again, err := json.Marshal(ev)
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
