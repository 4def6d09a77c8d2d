package seedlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/streams"
	"github.com/agentgate/agentgate/streams/pebblelog"
)

// GenOptions shape a generated log.
type GenOptions struct {
	// Agents is the number of agents (of principal GenPrincipal), Events
	// the number of decisions, spread round-robin over the agents.
	Agents, Events int
	// Start is the time of the first event; each decision comes Step
	// after the previous one.
	Start time.Time
	Step  time.Duration
	// Executions logs the execution of every approved action right after
	// its decision (at its declared cost).
	Executions bool
	// CheckpointEvents, when positive, appends a signed checkpoint after
	// every so many events (the gate's cadence, declared with an interval
	// of one hour).
	CheckpointEvents int
}

// GenPrincipal is the principal of the generated agents.
const GenPrincipal = "org_gen"

// genBatch is the number of events appended at once.
const genBatch = 4096

// Generate writes a data directory (log/ and keys/, no projections) whose
// log holds opts.Agents registrations followed by opts.Events decisions:
// four in five a low-risk calculate, one in five a medium-risk api_call,
// each declaring $0.01 and 100 tokens, at trust level 2 (all approved).
// With Executions, each approved action's execution follows it. It
// returns the agent IDs.
func Generate(ctx context.Context, dir string, opts GenOptions) ([]string, error) {
	if opts.Agents < 1 || opts.Events < 0 {
		return nil, errors.New("generating log: need at least one agent")
	}
	kr, err := attest.OpenKeyring(dir)
	if err != nil {
		return nil, fmt.Errorf("generating log: %w", err)
	}
	signer := kr.Signer("node_seedlog")
	ckSigner, _ := signer.(domain.CheckpointSigner)
	lg, err := pebblelog.Open(filepath.Join(dir, "log"), pebblelog.Options{})
	if err != nil {
		return nil, fmt.Errorf("generating log: %w", err)
	}
	defer lg.Close()
	g := &generator{log: lg, st: domain.NewState(), signer: signer, ck: ckSigner, opts: opts, now: opts.Start.UTC()}
	ids := make([]string, opts.Agents)
	for i := range ids {
		ev, err := g.decide(ctx, Register("gen"+strconv.Itoa(i), GenPrincipal, domain.TrustAutonomous, domain.Limits{MaxDailyCost: USD(1_000_000)}))
		if err != nil {
			return nil, err
		}
		if ev.Registered == nil {
			return nil, fmt.Errorf("generating log: registration refused: %+v", ev.Error)
		}
		ids[i] = ev.Registered.AgentID
	}
	steps := make([]int, opts.Agents)
	for i := range opts.Events {
		a := i % opts.Agents
		n := steps[a]
		steps[a]++
		action := "calculate"
		if i%5 == 4 {
			action = "api_call"
		}
		cmd := Verify(ids[a], "g"+strconv.Itoa(i), "c"+strconv.Itoa(n/40), n%40+1, action, USD(0.01))
		g.now = g.now.Add(opts.Step)
		ev, err := g.decide(ctx, cmd)
		if err != nil {
			return nil, err
		}
		if opts.Executions && ev.Decided != nil && ev.Decided.Decision == domain.Approved {
			if _, err := g.decide(ctx, Execution(ids[a], "x"+strconv.Itoa(i), ev.Decided.ActionID, USD(0.01), 100)); err != nil {
				return nil, err
			}
		}
	}
	return ids, g.flush(ctx)
}

type generator struct {
	log     *pebblelog.Log
	st      *domain.State
	signer  domain.Signer
	ck      domain.CheckpointSigner
	opts    GenOptions
	now     time.Time
	head    streams.Head
	batch   []streams.Record
	sinceCk int
}

// decide decides cmd at the generator's time, folds it and queues it.
func (g *generator) decide(ctx context.Context, cmd *domain.Command) (*domain.Event, error) {
	env := domain.Env{Now: g.now, Seq: g.head.Seq + 1, Signer: g.signer}
	ev := domain.Decide(g.st, env, cmd)
	if err := g.push(ctx, ev); err != nil {
		return nil, err
	}
	domain.Apply(g.st, ev)
	g.sinceCk++
	if g.opts.CheckpointEvents > 0 && g.sinceCk >= g.opts.CheckpointEvents && g.ck != nil {
		policy := domain.CheckpointPolicy{Events: int64(g.opts.CheckpointEvents), Interval: domain.Duration(time.Hour)}
		ck, err := domain.Checkpoint(domain.Env{Now: g.now, Seq: g.head.Seq + 1}, g.head.Hash, policy, g.ck)
		if err != nil {
			return nil, fmt.Errorf("generating checkpoint: %w", err)
		}
		if err := g.push(ctx, ck); err != nil {
			return nil, err
		}
		g.sinceCk = 0
	}
	return ev, nil
}

// push chains ev after the head and queues it.
func (g *generator) push(ctx context.Context, ev *domain.Event) error {
	ev.Prev = g.head.Hash
	p, err := handlers.EncodeEvent(ev)
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	rec := streams.Record{Seq: ev.Seq, Prev: ev.Prev, Payload: p}
	g.batch = append(g.batch, rec)
	g.head = streams.Head{Seq: rec.Seq, Hash: rec.Hash()}
	if len(g.batch) == genBatch {
		return g.flush(ctx)
	}
	return nil
}

func (g *generator) flush(ctx context.Context) error {
	if len(g.batch) == 0 {
		return nil
	}
	if err := g.log.Append(ctx, g.batch); err != nil {
		return fmt.Errorf("appending generated events: %w", err)
	}
	g.batch = g.batch[:0]
	return nil
}
