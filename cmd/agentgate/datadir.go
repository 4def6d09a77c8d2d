package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentgate/agentgate/handlers/attest"
)

// pidFile is the file in a data dir that a process using the dir holds an
// exclusive flock on, with its pid as content. The lock ends with the
// process (even by kill -9); the file stays.
const pidFile = "agentgate.pid"

// dataDirInUse is the error of a data dir another agentgate process holds.
type dataDirInUse struct {
	dir string
	pid int // 0 when the holder's pid could not be read
}

func (e *dataDirInUse) Error() string {
	if e.pid == 0 {
		return fmt.Sprintf("%s is in use by a running agentgate", e.dir)
	}
	return fmt.Sprintf("%s is in use by a running agentgate (pid %d)", e.dir, e.pid)
}

// lockDataDir takes the data dir's process lock (creating the dir), so that
// a second process on the same dir (a serve, replay or offline keys
// command) is told which agentgate holds it rather than meeting Pebble's
// lock error. It fails with a *dataDirInUse when another process holds it.
// unlock releases it.
func lockDataDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, pidFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the data dir's pid file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &dataDirInUse{dir: dir, pid: readPid(f)}
		}
		return nil, fmt.Errorf("locking the data dir: %w", err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	_, err = f.WriteAt(pid, 0)
	if err == nil {
		err = f.Truncate(int64(len(pid)))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the data dir's pid file: %w", err)
	}
	return func() { f.Close() }, nil
}

// readPid reads the pid a lock holder wrote (0 if there is none yet).
func readPid(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// reloadKeysOnHangup makes a running gate pick up a signing key that `keys
// rotate-signing` added to its data dir: on SIGHUP it reloads the keyring
// (the new key signs from then on, and the JWKS lists it). A key dir that
// fails to load leaves the keys in use unchanged. stop ends the watch.
func reloadKeysOnHangup(kr *attest.Keyring, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				if err := kr.Reload(); err != nil {
					log.Error("reloading signing keys (the keys in use are unchanged)", "err", err)
					continue
				}
				log.Info("reloaded signing keys", "active_kid", kr.ActiveKID(), "keys", len(kr.KIDs()))
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// rotateSigning adds a signing key to dataDir. When a gate runs on the dir
// it is told (SIGHUP) to reload its keys, so that it signs with the new
// key at once; the message says which process was told.
func rotateSigning(dataDir string, log *slog.Logger) (string, error) {
	unlock, err := lockDataDir(dataDir)
	var inUse *dataDirInUse
	switch {
	case errors.As(err, &inUse):
		if inUse.pid == 0 {
			return "", fmt.Errorf("%w: its pid is unknown, so it cannot be told to reload its keys; stop it first", err)
		}
	case err != nil:
		return "", err
	default:
		defer unlock()
	}
	kr, err := attest.OpenKeyring(dataDir)
	if err != nil {
		return "", err
	}
	kid, err := kr.Rotate()
	if err != nil {
		return "", err
	}
	if inUse == nil {
		return fmt.Sprintf("active signing key: %s\n", kid), nil
	}
	if err := syscall.Kill(inUse.pid, syscall.SIGHUP); err != nil {
		return "", fmt.Errorf("telling the running agentgate (pid %d) to reload its keys: %w; restart it to sign with %s", inUse.pid, err, kid)
	}
	log.Info("told the running gate to reload its signing keys", "pid", inUse.pid, "kid", kid)
	return fmt.Sprintf("active signing key: %s (the running agentgate, pid %d, signs with it once it has reloaded its keys)\n", kid, inUse.pid), nil
}
