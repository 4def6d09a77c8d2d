package cehttp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentgate/agentgate/streams/cehttp"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the reply fixtures in schemas/testdata from the current encoder")

const fixtureDir = "../../schemas/testdata"

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

func parseRequest(t *testing.T, raw []byte) *http.Request {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatalf("parsing fixture request: %v", err)
	}
	return r
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("compacting %q: %v", b, err)
	}
	return out.String()
}

// fixtureData is the command data of both request fixtures (the QWED-Agent spec v1.1
// §4.1 example), at a given step.
func fixtureData(step int) string {
	return `{"agent_id":"agent_xyz789","agent_token":"qwed_agent_fixture_token","action":{"type":"execute_sql","query":"SELECT * FROM customers WHERE status = 'active'","target":"production_db"},"context":{"conversation_id":"conv_123","step_number":` +
		map[int]string{5: "5", 6: "6"}[step] + `,"user_intent":"Get list of active customers"},"options":{"require_attestation":true,"risk_threshold":"medium"}}`
}

var fixtures = []struct {
	request, reply string
	want           cehttp.Event
}{
	{"ce_binary_request.http", "ce_binary_reply.http", cehttp.Event{
		SpecVersion:     "1.0",
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/agent_xyz789",
		ID:              "0b6c2f4e-5a1d-4e8f-9c3b-000000000005",
		Subject:         "agent_xyz789",
		Time:            time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC),
		DataContentType: "application/json",
		Data:            []byte(fixtureData(5)),
		Extensions:      map[string]string{"correlationid": "conv_123/5", "replyto": "agentgate.replies", "partitionkey": "agent_xyz789"},
		Mode:            cehttp.ModeBinary,
	}},
	{"ce_structured_request.http", "ce_structured_reply.http", cehttp.Event{
		SpecVersion:     "1.0",
		Type:            "qwed.agent.action.verify",
		Source:          "//agents/agent_xyz789",
		ID:              "0b6c2f4e-5a1d-4e8f-9c3b-000000000006",
		Subject:         "agent_xyz789",
		Time:            time.Date(2026, 1, 15, 10, 0, 1, 0, time.UTC),
		DataContentType: "application/json",
		Data:            []byte(fixtureData(6)),
		Extensions:      map[string]string{"replyto": "agentgate.replies", "partitionkey": "agent_xyz789"},
		Mode:            cehttp.ModeStructured,
	}},
}

// Frozen wire fixtures (STYLE.md, kafka-go): the published request
// formats keep decoding to the same Event, and the reply to each is
// byte-identical to its frozen reply fixture (regenerate with -rewrite
// after a reviewed change).
func TestFrozenFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.request, func(t *testing.T) {
			got, err := cehttp.Decode(parseRequest(t, readFixture(t, f.request)))
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if compactJSON(t, got.Data) != compactJSON(t, f.want.Data) {
				t.Fatalf("data\n got %s\nwant %s", got.Data, f.want.Data)
			}
			got.Data = f.want.Data
			if !reflect.DeepEqual(got, f.want) {
				t.Fatalf("decoded\n got %+v\nwant %+v", got, f.want)
			}

			rec := httptest.NewRecorder()
			if err := cehttp.Write(rec, http.StatusOK, cehttp.NewReply(got, []byte(replyData), replyTime)); err != nil {
				t.Fatalf("writing reply: %v", err)
			}
			wire, err := httputil.DumpResponse(rec.Result(), true)
			if err != nil {
				t.Fatalf("dumping reply: %v", err)
			}
			path := filepath.Join(fixtureDir, f.reply)
			if *rewrite {
				if err := os.WriteFile(path, wire, 0o644); err != nil {
					t.Fatalf("rewriting %s: %v", path, err)
				}
			}
			if want := readFixture(t, f.reply); !bytes.Equal(wire, want) {
				t.Fatalf("reply differs from %s\n got:\n%s\nwant:\n%s", f.reply, wire, want)
			}
		})
	}
}

// The request fixtures, sent byte for byte over a TCP connection to a
// real server, get the frozen replies (the Date header aside).
func TestFixturesOverSocket(t *testing.T) {
	srv := httptest.NewServer(gateHandler(t))
	defer srv.Close()
	for _, f := range fixtures {
		t.Run(f.request, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatalf("dialling: %v", err)
			}
			defer func() { _ = conn.Close() }()
			if _, err := conn.Write(readFixture(t, f.request)); err != nil {
				t.Fatalf("sending: %v", err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading response: %v", err)
			}
			defer func() { _ = resp.Body.Close() }()
			got, err := cehttp.DecodeResponse(resp)
			if err != nil {
				t.Fatalf("decoding reply: %v", err)
			}
			frozen, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(readFixture(t, f.reply))), nil)
			if err != nil {
				t.Fatalf("parsing reply fixture: %v", err)
			}
			want, err := cehttp.DecodeResponse(frozen)
			if err != nil {
				t.Fatalf("decoding reply fixture: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("reply over the socket\n got %+v\nwant %+v", got, want)
			}
			if want.Extensions["correlationid"] != f.want.CorrelationID() {
				t.Fatalf("reply correlationid %q, want %q", want.Extensions["correlationid"], f.want.CorrelationID())
			}
		})
	}
}
