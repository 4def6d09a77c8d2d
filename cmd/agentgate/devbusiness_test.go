package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// dev-business answers an execute's request {status: completed, data}
// with the Idempotency-Key as the order id, counts the calls per key
// (GET /calls), and refuses what is not a JSON POST.
func TestDevBusiness(t *testing.T) {
	srv := httptest.NewServer(newDevBusiness())
	defer srv.Close()
	post := func(key, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for range 2 {
		if st, b := post("tx_1", `{"item":"latte","amount_cents":450}`); st != 200 ||
			b != `{"data":{"order_id":"tx_1","received":{"item":"latte","amount_cents":450}},"status":"completed"}`+"\n" {
			t.Fatalf("execute: %d %s", st, b)
		}
	}
	if st, b := post("tx_2", `{"item":`); st != http.StatusBadRequest || !strings.Contains(b, `"status":"failed"`) {
		t.Fatalf("a body that is not JSON: %d %s", st, b)
	}
	resp, err := http.Get(srv.URL + "/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var calls map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil || len(calls) != 1 || calls["tx_1"] != 2 {
		t.Fatalf("calls %v %v, want tx_1: 2", calls, err)
	}
}
