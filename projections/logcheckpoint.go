package projections

import (
	"errors"
	"time"

	"github.com/agentgate/agentgate/domain"
)

// LogCheckpoint is the last log.checkpointed event applied to a Store
// (issue 5): the worker resumes the checkpoint cadence from it.
type LogCheckpoint struct {
	// Seq is the checkpoint event's own seq (0: no checkpoint yet).
	Seq  uint64                  `json:"seq"`
	Time time.Time               `json:"time"`
	Next domain.CheckpointPolicy `json:"next"`
}

// logCheckpointKey holds the LogCheckpoint.
var logCheckpointKey = key(tMeta, "logckpt")

// LastLogCheckpoint returns the last checkpoint event applied (zero when
// there is none).
func (s *Store) LastLogCheckpoint() (LogCheckpoint, error) {
	var c LogCheckpoint
	err := s.getJSON(logCheckpointKey, &c)
	if errors.Is(err, ErrNotFound) {
		return LogCheckpoint{}, nil
	}
	return c, err
}

// logCheckpoint records a checkpoint event in the batch.
func (w *batchWriter) logCheckpoint(ev *domain.Event) error {
	return w.setJSON(logCheckpointKey, LogCheckpoint{Seq: ev.Seq, Time: ev.Time, Next: ev.Checkpoint.Next})
}
