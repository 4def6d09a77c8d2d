package projections

import "github.com/agentgate/agentgate/domain"

// OpenTransaction returns the open transaction id of the state the store
// holds (executing, pending_approval or queued), or ErrNotFound: the
// adapter runner's point read of a transaction that became executing.
func (s *Store) OpenTransaction(id string) (*domain.Transaction, error) {
	t := new(domain.Transaction)
	if err := s.getJSON(key(tExecOpen, id), t); err != nil {
		return nil, err
	}
	return t, nil
}
