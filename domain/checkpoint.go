package domain

import (
	"errors"
	"time"
)

// CheckpointPolicy says when the next log checkpoint is due: once Events
// events follow the last checkpoint, or once Interval has passed since the
// first of them, whichever comes first. The worker checks it at the end of
// every batch, so the checkpoint is appended in the same atomic write as
// the event that made it due.
type CheckpointPolicy struct {
	Events   int64    `json:"events"`
	Interval Duration `json:"interval"`
}

// Default checkpoint policy (issue 5).
const (
	DefaultCheckpointEvents   = 1000
	DefaultCheckpointInterval = 10 * time.Second
)

// DefaultCheckpointPolicy returns every 1,000 events or 10 s.
func DefaultCheckpointPolicy() CheckpointPolicy {
	return CheckpointPolicy{Events: DefaultCheckpointEvents, Interval: Duration(DefaultCheckpointInterval)}
}

// Valid reports whether both bounds are positive.
func (p CheckpointPolicy) Valid() bool { return p.Events > 0 && p.Interval > 0 }

// LogCheckpoint is the payload of an EvLogCheckpointed event: a signed
// statement that the partition's chain, up to and including the event at
// Seq, hashes to Head. A checkpoint at log position n always covers n-1:
// Seq is the event's own Seq minus one and Head its Prev, so its content
// is reproducible from the log alone.
type LogCheckpoint struct {
	// Seq is the last event covered; Head the hex SHA-256 of its bytes as
	// the log stores them.
	Seq  uint64 `json:"seq"`
	Head string `json:"head"`
	// Next is the policy under which the next checkpoint is due; a
	// verifier uses it to tell a cut tail from a quiet one.
	Next CheckpointPolicy `json:"next"`
	// Signature is the compact JWS (ES256, RFC 6979 deterministic, typ
	// "agentgate-checkpoint+jwt") of the CheckpointClaims.
	Signature string `json:"signature"`
}

// CheckpointClaims are what a checkpoint signature binds.
type CheckpointClaims struct {
	Partition int32
	Seq       uint64
	Head      string
	IssuedAt  time.Time
	Next      CheckpointPolicy
}

// CheckpointSigner signs checkpoint claims. Implementations must be
// deterministic (RFC 6979), like Signer, so that a replay reproduces the
// checkpoint byte for byte.
type CheckpointSigner interface {
	SignCheckpoint(c CheckpointClaims) (string, error)
}

// Checkpoint returns the checkpoint event at position env.Seq that covers
// the chain up to env.Seq-1, whose hash is head, signed by signer. Like
// Decide it reads nothing but its arguments; the caller sets Prev (= head)
// as for every event.
func Checkpoint(env Env, head string, next CheckpointPolicy, signer CheckpointSigner) (*Event, error) {
	switch {
	case env.Seq < 2 || head == "":
		return nil, errors.New("building checkpoint: nothing to cover")
	case signer == nil:
		return nil, errors.New("building checkpoint: no signer")
	case !next.Valid():
		return nil, errors.New("building checkpoint: invalid policy")
	}
	c := CheckpointClaims{Partition: env.Partition, Seq: env.Seq - 1, Head: head, IssuedAt: env.Now, Next: next}
	sig, err := signer.SignCheckpoint(c)
	if err != nil {
		return nil, err
	}
	return &Event{
		Seq: env.Seq, Partition: env.Partition, Time: env.Now, Type: EvLogCheckpointed,
		Checkpoint: &LogCheckpoint{Seq: c.Seq, Head: head, Next: next, Signature: sig},
	}, nil
}
