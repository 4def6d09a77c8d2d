package guard

import (
	"fmt"
	"strings"
	"testing"
)

// With ScanMode.Keys, an object key is content: a key holding a finding
// is found, and the pointer segment of such a key is ~redacted~N (its
// index among its object's members), so no Where repeats a card or a
// key; keys without findings keep their escaped text. Without Keys the
// scan is as it was (the logs decided with it re-decide unchanged).
func TestScanJSONKeysRedactsSensitiveSegments(t *testing.T) {
	const card, key = "4111111111111111", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	doc := []byte(`{"a~/b":1,"` + card + `":{"x":"` + card + `","` + key + `":["4111 1111 1111 1111"]},"n":"` + key + `"}`)
	got := fmt.Sprint(ScanJSONWith(doc, ScanMode{All: true, Keys: true}))
	for _, leak := range []string{card, key, "4111 "} {
		if strings.Contains(got, leak) {
			t.Fatalf("a location holds %q: %s", leak, got)
		}
	}
	var wheres []string
	for _, f := range ScanJSONWith(doc, ScanMode{All: true, Keys: true}) {
		wheres = append(wheres, f.Kind+"@"+f.Where)
	}
	want := "card_number@/~redacted~1 card_number@/~redacted~1/x secret@/~redacted~1/~redacted~1 card_number@/~redacted~1/~redacted~1/0 secret@/n"
	if s := strings.Join(wheres, " "); s != want {
		t.Fatalf("findings %s\nwant %s", s, want)
	}
	// Without Keys: the values only, the pointers as they were.
	var old []string
	for _, f := range ScanJSONWith(doc, ScanMode{All: true}) {
		old = append(old, f.Where)
	}
	if s := strings.Join(old, " "); s != "/"+card+"/x /"+card+"/"+key+"/0 /n" {
		t.Fatalf("without Keys: %s", s)
	}
}
