package kafkagate_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers/kafkagate"
	"github.com/agentgate/agentgate/streams/diskspace"
)

// Issue 11 item 6 on Kafka: the log is Kafka, but a partition's store is
// on the local disk. While that disk is full, a request is answered 503
// QWED-SYS-003 (nothing decided, the instance alive); once space returns
// the same request is decided, without a restart; an instance restarted
// on the full disk answers the same and recovers the same way.
func TestKafkaFullDisk(t *testing.T) {
	_, brokers := broker(t)
	lg := &logs{brokers: brokers}
	fs := diskspace.NewFullFS(nil)
	dir := t.TempDir()
	withFS := func(c *kafkagate.Config) { c.FS, c.MinFreeBytes = fs, 1<<20 }
	a := startGate(t, brokers, lg, dir, withFS)
	c := newClient(t, brokers)
	agent, token := register(t, c, "disk")
	cmd := func(step int) client.Command {
		cmd := verifyCmd(agent, token, "c", step)
		cmd.ID = fmt.Sprint("step-", step)
		return cmd
	}
	approved := func(step int) {
		t.Helper()
		// A request decided while the batch refused for lack of space is
		// still settling fails with it (503 QWED-SYS-002, "retry with the
		// same id": a batch decided after a failed one fails too); its
		// retry is decided on the rebuilt state.
		for try := 0; ; try++ {
			d := decision(t, c, cmd(step))
			if d.Error != nil && d.Error.Code == domain.CodeUnavailable && try < 5 {
				continue
			}
			if d.Decision != "APPROVED" {
				t.Fatalf("step %d: %+v", step, d)
			}
			return
		}
	}
	refused := func(step int) {
		t.Helper()
		rep, err := c.Request(context.Background(), cmd(step))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status != 503 || !strings.Contains(string(rep.Data), string(domain.CodeStorageFull)) {
			t.Fatalf("step %d on a full disk: %d %s, want 503 %s", step, rep.Status, rep.Data, domain.CodeStorageFull)
		}
	}
	approved(1)
	fs.Fill()
	refused(2)
	fs.Free()
	approved(2)

	a.stop()
	fs.Fill()
	startGate(t, brokers, lg, dir, withFS)
	refused(3)
	fs.Free()
	approved(3)
	if d := decision(t, c, cmd(2)); d.Decision != "APPROVED" || d.StepNumber != 2 {
		t.Fatalf("step 2 again (its recorded decision): %+v", d)
	}
}
