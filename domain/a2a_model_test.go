package domain

import (
	"bytes"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/domain/a2a"
)

// a2aModel is QWED A2A's trust boundary and token bucket written plainly:
// sets of agents and pairs, and each pair's spent tokens as an exact
// rational, refilled rate/60 a second down to 0; a message passes when
// one more token fits the burst (the bucket keeps what is spent, so a
// lower burst takes effect as the debt refills: a2a.Bucket).
type a2aModel struct {
	trusted, blocked map[string]map[string]bool // by boundary
	pairs            map[string]map[[2]string]bool
	tokens           map[[3]string]*big.Rat
	last             map[[3]string]time.Time
}

func newA2AModel() *a2aModel {
	return &a2aModel{trusted: map[string]map[string]bool{}, blocked: map[string]map[string]bool{},
		pairs: map[string]map[[2]string]bool{}, tokens: map[[3]string]*big.Rat{}, last: map[[3]string]time.Time{}}
}

func (m *a2aModel) set(l map[string]map[string]bool, b, a string, on bool) {
	if l[b] == nil {
		l[b] = map[string]bool{}
	}
	l[b][a] = on
}

// verdict is the model's status for a message of boundary b at now.
func (m *a2aModel) verdict(cfg *A2AConfig, b, s, r string, now time.Time) a2a.Status {
	in := func(l map[string]map[string]bool, a string) bool {
		return l[AdminPrincipal][a] || b != AdminPrincipal && l[b][a]
	}
	p := [2]string{s, r}
	switch {
	case in(m.blocked, s), in(m.blocked, r), m.pairs[AdminPrincipal][p], b != AdminPrincipal && m.pairs[b][p]:
		return a2a.StatusBlocked
	case !cfg.DefaultAllow && (!in(m.trusted, s) || !in(m.trusted, r)):
		return a2a.StatusBlocked
	}
	k := [3]string{b, s, r}
	spent := new(big.Rat)
	if x := m.tokens[k]; x != nil {
		refill := new(big.Rat).SetFrac64(now.Sub(m.last[k]).Nanoseconds()*cfg.RatePerMinute, int64(time.Minute))
		if spent.Sub(x, refill); spent.Sign() < 0 {
			spent.SetInt64(0)
		}
	}
	m.tokens[k], m.last[k] = spent, now
	one := big.NewRat(1, 1)
	if new(big.Rat).Add(spent, one).Cmp(new(big.Rat).SetInt64(cfg.Burst)) > 0 {
		return a2a.StatusRateLimited
	}
	spent.Add(spent, one)
	return a2a.StatusForwarded
}

// Random boundary changes and messages, time moving on, decided against
// the model: every verdict's status is the model's, and after every event
// the state restores from its JSON (the projections' form) and clones to
// itself, and re-deciding the event from the state before it gives its
// bytes.
func TestA2ARandomAgainstModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		r := rand.New(rand.NewPCG(seed, 0xa2a))
		g := newGate(t)
		g.s.Config = DefaultConfig()
		m := newA2AModel()
		agents := []string{"a", "b", "c", "d"}
		bounds := []string{"org_1", "org_2", AdminPrincipal}
		pick := func(l []string) string { return l[r.IntN(len(l))] }
		counts := map[a2a.Status]int{}
		for i := range 3000 {
			g.now = g.now.Add(time.Duration(r.IntN(4000)) * time.Millisecond)
			if r.IntN(200) == 0 {
				g.now = g.now.Add(10 * time.Minute) // buckets go idle and are evicted
			}
			before := stateJSON(t, g.s)
			prev := g.s.Clone()
			var ev *Event
			switch p := r.IntN(100); {
			case p < 2:
				cfg := DefaultConfig()
				a := DefaultA2AConfig()
				a.RatePerMinute, a.Burst, a.DefaultAllow = int64(r.IntN(120)+1), int64(r.IntN(5)+1), r.IntN(3) == 0
				cfg.A2A = &a
				ev = g.exec(&Command{Type: CmdConfigure, Principal: AdminPrincipal, Configure: &Configure{Config: cfg}})
			case p < 25:
				b, a := pick(bounds), pick(agents)
				ops := []string{A2AOpTrust, A2AOpTrust, A2AOpUntrust, A2AOpBlock, A2AOpUnblock, A2AOpBlockPair, A2AOpUnblockPair}
				c := &A2ABoundaryChange{Op: ops[r.IntN(len(ops))], Agent: a}
				if c.Op == A2AOpBlockPair || c.Op == A2AOpUnblockPair {
					c.Agent, c.Sender, c.Receiver = "", a, pick(agents)
				}
				ev = g.exec(boundary(b, c.Op, c.Agent, c.Sender, c.Receiver))
				on := c.Op == A2AOpTrust || c.Op == A2AOpBlock || c.Op == A2AOpBlockPair
				switch c.Op {
				case A2AOpTrust, A2AOpUntrust:
					m.set(m.trusted, b, a, on)
				case A2AOpBlock, A2AOpUnblock:
					m.set(m.blocked, b, a, on)
				default:
					if m.pairs[b] == nil {
						m.pairs[b] = map[[2]string]bool{}
					}
					m.pairs[b][[2]string{c.Sender, c.Receiver}] = on
				}
			default:
				b, s, rc := pick(bounds), pick(agents), pick(agents)
				cmd := a2aMsg(s, rc, a2a.PayloadGeneral, `{"i":`+strconv.Itoa(i)+`}`)
				cmd.Principal = b
				want := m.verdict(prev.Config.A2ASettings(), b, s, rc, g.now)
				ev = g.exec(cmd)
				v := verdictOf(t, ev)
				if v.Status != want {
					t.Fatalf("seed %d step %d: %s %s->%s: got %s (%s), the model says %s", seed, i, b, s, rc, v.Status, v.Reason, want)
				}
				counts[v.Status]++
			}
			again := Decide(prev, Env{Now: ev.Time, Seq: ev.Seq, Partition: ev.Partition, Signer: hashSigner{}}, ev.Command)
			x, _ := json.Marshal(ev)
			y, _ := json.Marshal(again)
			if !bytes.Equal(x, y) || !bytes.Equal(stateJSON(t, prev), before) {
				t.Fatalf("seed %d step %d: re-decided on the clone\n%s\n%s", seed, i, y, x)
			}
			now := stateJSON(t, g.s)
			var back State
			if err := json.Unmarshal(now, &back); err != nil || !bytes.Equal(stateJSON(t, &back), now) || !bytes.Equal(stateJSON(t, g.s.Clone()), now) {
				t.Fatalf("seed %d step %d: the state does not restore from its JSON or clone to itself: %v", seed, i, err)
			}
		}
		if counts[a2a.StatusForwarded] == 0 || counts[a2a.StatusBlocked] == 0 || counts[a2a.StatusRateLimited] == 0 {
			t.Fatalf("seed %d covers %v", seed, counts)
		}
	}
}
