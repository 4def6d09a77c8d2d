package attest

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestReloadPicksUpAKeyAnotherProcessAdded: a key another keyring (another
// process: `keys rotate-signing` on a running gate's data dir) added becomes
// active on Reload, the JWKS keeps the older key, and a key file that does
// not load fails the reload and leaves the keys in use unchanged.
func TestReloadPicksUpAKeyAnotherProcessAdded(t *testing.T) {
	dir := t.TempDir()
	live, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := live.ActiveKID()
	other, err := OpenKeyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	added, err := other.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if live.ActiveKID() != first {
		t.Fatalf("the live keyring changed key before a reload")
	}
	if err := live.Reload(); err != nil {
		t.Fatal(err)
	}
	if live.ActiveKID() != added {
		t.Fatalf("active key after reload = %s, want the added %s", live.ActiveKID(), added)
	}
	if kids := live.KIDs(); !slices.Contains(kids, first) || !slices.Contains(kids, added) {
		t.Fatalf("keys after reload = %v, want both %s and %s", kids, first, added)
	}
	if err := os.WriteFile(filepath.Join(dir, keysDir, "9-broken.pem"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := live.Reload(); err == nil {
		t.Fatal("a key file that does not load was accepted")
	}
	if live.ActiveKID() != added || len(live.KIDs()) != 2 {
		t.Fatalf("a failed reload changed the keys in use: active %s, keys %v", live.ActiveKID(), live.KIDs())
	}
}

// TestReloadConcurrentWithRotateAndSigning: reloads (SIGHUP), rotations
// and readers of the active key may run at once and end with every key
// loaded; under -race it also gives the detector the interleavings in which
// the keyring's state would be touched outside its locks.
func TestReloadConcurrentWithRotateAndSigning(t *testing.T) {
	kr, err := OpenKeyring(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 2 {
		wg.Go(func() {
			for range 5 {
				if err := kr.Reload(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			if _, err := kr.Rotate(); err != nil {
				errs <- err
			}
		}
	})
	wg.Go(func() {
		for range 50 {
			if kr.ActiveKID() == "" {
				errs <- os.ErrNotExist
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(kr.KIDs()); n != 4 {
		t.Fatalf("keys = %d, want 4 (one at open, three rotated)", n)
	}
}
