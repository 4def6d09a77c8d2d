package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/agentgate/agentgate/client"
	"github.com/agentgate/agentgate/domain"
)

// TestHTTPClientDoesNotFollowRedirects: a server (a hostile one, or a
// misconfigured proxy in front of the gate) answering 307 to another host
// must not receive the client's credentials there. net/http strips
// Authorization on a cross-host redirect but forwards X-API-Key (and a 307
// re-sends the body), so the client follows no redirect: the 3xx is the
// call's error, and the other host sees nothing.
func TestHTTPClientDoesNotFollowRedirects(t *testing.T) {
	var seen atomic.Int32
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		leaked.Store(r.Header.Get("X-API-Key") + "|" + r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"agent_id":"agt_x","decision":"APPROVED"}`))
	}))
	defer other.Close()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()

	for _, tc := range []struct {
		name string
		opts []client.HTTPOption
	}{
		{"default http.Client", nil},
		{"caller's http.Client", []client.HTTPOption{client.WithHTTPClient(&http.Client{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]client.HTTPOption{client.WithAPIKey("qwed_secret_key"), client.WithMaxRetries(0)}, tc.opts...)
			c, err := client.NewHTTP(front.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetAgent(context.Background(), "agt_x")
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusTemporaryRedirect {
				t.Fatalf("GetAgent through a 307: err = %v, want an *APIError with status 307", err)
			}
			ag := c.WithAgent("agent_token_secret")
			_, err = ag.VerifyAction(context.Background(), "agt_x", domain.VerifyAction{Action: domain.Action{Type: "calculate", Query: "1+1"}})
			if !errors.As(err, &ae) || ae.Status != http.StatusTemporaryRedirect {
				t.Fatalf("VerifyAction through a 307: err = %v, want an *APIError with status 307", err)
			}
			if n := seen.Load(); n != 0 {
				t.Fatalf("the other host got %d requests (credentials %q)", n, leaked.Load())
			}
		})
	}
}
