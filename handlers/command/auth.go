package command

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/projections"
)

// ErrInvalidKey is Keys.Principal's answer for a key no principal has.
var ErrInvalidKey = errors.New("invalid API key")

// KeyStore is where the principals' API keys are recorded
// (*projections.Store): KeyPrincipal returns the principal of a key hash,
// or projections.ErrNotFound.
type KeyStore interface {
	KeyPrincipal(keyHash string) (string, error)
}

// Keys authenticates API keys, for every transport: the admin key and
// the keys recorded in a store.
type Keys struct {
	adminHash []byte // nil: no admin key
	store     KeyStore
	catchUp   func(context.Context) bool
}

// NewKeys returns the authenticator of the admin key whose hex SHA-256 is
// adminHash ("" disables it; case and surrounding space are ignored) and
// of the keys recorded in store. catchUp, if set, is called when store
// does not know a key: it reports whether store now holds every key
// recorded before the call, and if so the key is looked up once more.
func NewKeys(adminHash string, store KeyStore, catchUp func(context.Context) bool) Keys {
	k := Keys{store: store, catchUp: catchUp}
	if h := strings.ToLower(strings.TrimSpace(adminHash)); h != "" {
		k.adminHash = []byte(h)
	}
	return k
}

// Principal returns the principal of an API key: AdminPrincipal for the
// admin key (compared in constant time), else the principal the store
// records for the key's hash. It returns ErrInvalidKey when no principal
// has the key, and the store's error (wrapped) when the keys cannot be
// read.
func (k Keys) Principal(ctx context.Context, key string) (string, error) {
	h := HashSecret(key)
	if k.adminHash != nil && subtle.ConstantTimeCompare([]byte(h), k.adminHash) == 1 {
		return domain.AdminPrincipal, nil
	}
	p, err := k.store.KeyPrincipal(h)
	if errors.Is(err, projections.ErrNotFound) && k.catchUp != nil && k.catchUp(ctx) {
		p, err = k.store.KeyPrincipal(h)
	}
	if errors.Is(err, projections.ErrNotFound) {
		return "", ErrInvalidKey
	}
	if err != nil {
		return "", fmt.Errorf("reading API keys: %w", err)
	}
	return p, nil
}

// InvalidKey is the refusal of an API key no principal has
// (QWED-AUTH-002, naming the transport's header).
func (t Transport) InvalidKey() *Rejection {
	return Reject(domain.CodeInvalidAPIKey, map[string]any{"header": t.KeyHeader}, "invalid API key")
}
