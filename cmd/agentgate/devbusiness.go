package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

func init() { moreCommands = append(moreCommands, devBusinessCmd) }

// Bounds of dev-business.
const (
	// devBusinessMaxBody bounds a request to the business (the gate sends
	// at most domain.MaxExecuteRequestBytes).
	devBusinessMaxBody = 64 << 10
	// devBusinessMaxKeys bounds the idempotency keys it remembers; past
	// it the oldest is forgotten.
	devBusinessMaxKeys = 10_000
)

// devBusinessCmd runs a business endpoint for the consumer policy
// engine's tour and tests: what the gate's adapter calls after an execute
// is decided.
func devBusinessCmd() *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:   "dev-business",
		Short: "Run a local business endpoint for development and tests: answers each execute {status: completed, data}",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", listen, err)
			}
			srv := &http.Server{Handler: newDevBusiness(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
			fmt.Fprintf(os.Stdout, "dev-business listening on http://%s\n", ln.Addr())
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case <-ctx.Done():
			case err := <-errc:
				return fmt.Errorf("serving: %w", err)
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("shutting down: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9090", "listen address HOST:PORT (port 0 picks a free one)")
	return cmd
}

// devBusiness answers POST (any path) with {"status": "completed",
// "data": {"order_id", "received"}}: the order id is the Idempotency-Key
// the gate sends (the transaction id), so a call repeated with the same
// key is answered the same order. GET /calls answers how many calls each
// key got.
type devBusiness struct {
	mu    sync.Mutex
	calls map[string]int
	order []string // keys, oldest first
}

func newDevBusiness() *devBusiness { return &devBusiness{calls: map[string]int{}} }

func (b *devBusiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet && r.URL.Path == "/calls" {
		b.mu.Lock()
		out, err := json.Marshal(b.calls)
		b.mu.Unlock()
		if err != nil {
			http.Error(w, `{"status":"failed"}`, http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(append(out, '\n'))
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = io.WriteString(w, `{"status":"failed","data":{"error":"POST an execute request"}}`+"\n")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, devBusinessMaxBody))
	if err != nil || !json.Valid(body) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"status":"failed","data":{"error":"the request is not JSON"}}`+"\n")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	b.count(key)
	out, err := json.Marshal(map[string]any{"status": "completed",
		"data": map[string]any{"order_id": key, "received": json.RawMessage(body)}})
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(append(out, '\n'))
}

// count counts one call with key, forgetting the oldest key past
// devBusinessMaxKeys.
func (b *devBusiness) count(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.calls[key]; !ok {
		if len(b.order) >= devBusinessMaxKeys {
			delete(b.calls, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, key)
	}
	b.calls[key]++
}
