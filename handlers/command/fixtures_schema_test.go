package command

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/schemas"
	"github.com/agentgate/agentgate/streams/cehttp"
	"github.com/agentgate/agentgate/streams/cekafka"
	"github.com/agentgate/agentgate/streams/cekafka/cekafkatest"
)

// fixtureDir holds the frozen CloudEvent fixtures of the transports.
const fixtureDir = "../../schemas/testdata"

// TestCloudEventFixturesMatchSchemas validates the data of the frozen
// CloudEvent fixtures (HTTP and Kafka, binary and structured) against the
// schemas: each request's data against its command's body schema, each
// reply's data against the reply schema of the command it answers. The
// HTTP reply fixtures pin the HTTP codec's encoding of a reply whose data
// is a placeholder ({"decision":"APPROVED"}), not a gate reply: while
// they hold it they are left out (the Kafka reply fixtures are real
// replies of the gate, and are checked).
func TestCloudEventFixturesMatchSchemas(t *testing.T) {
	type decoded struct {
		typ  string
		data []byte
	}
	read := func(t *testing.T, name string) decoded {
		t.Helper()
		path := filepath.Join(fixtureDir, name)
		var ev decoded
		switch {
		case strings.HasSuffix(name, "_request.http"):
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			e, err := cehttp.Decode(r)
			if err != nil {
				t.Fatal(err)
			}
			ev = decoded{e.Type, e.Data}
		case strings.HasSuffix(name, "_reply.http"):
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatal(err)
			}
			e, err := cehttp.DecodeResponse(resp)
			if err != nil {
				t.Fatal(err)
			}
			ev = decoded{e.Type, e.Data}
		default:
			fx, err := cekafkatest.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			decode := cekafka.Decode
			if strings.HasSuffix(name, "_reply.json") {
				decode = cekafka.DecodeReply
			}
			e, err := decode(fx.Message())
			if err != nil {
				t.Fatal(err)
			}
			ev = decoded{e.Type, e.Data}
		}
		return ev
	}
	names, err := filepath.Glob(filepath.Join(fixtureDir, "ce_*"))
	if err != nil || len(names) < 8 {
		t.Fatalf("want the 8 CloudEvent fixtures in %s, got %v (%v)", fixtureDir, names, err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			ev := read(t, name)
			if strings.HasSuffix(name, "_reply.http") && string(ev.data) == `{"decision":"APPROVED"}` {
				t.Skip("the HTTP codec's placeholder reply data, not a gate reply")
			}
			var vs []schemas.Violation
			if typ, ok := strings.CutSuffix(ev.typ, ".reply"); ok {
				vs, err = schemas.ValidateReply(typ, ev.data)
			} else if ev.typ == "qwed.a2a.forwarded" {
				// A forwarded message's data is the AgentMessage as the
				// gate accepted it: the qwed.a2a.message command's body.
				vs, err = schemas.ValidateCommand("qwed.a2a.message", ev.data)
			} else {
				vs, err = schemas.ValidateCommand(ev.typ, ev.data)
			}
			if err != nil || vs != nil {
				t.Fatalf("%s data does not match its schema: %v %+v\n%s", ev.typ, err, vs, ev.data)
			}
		})
	}
}
