package httpapi

import "net/http"

func (a *api) events(w http.ResponseWriter, r *http.Request) {
	e := failure("QWED-REQ-005", "not yet")
	writeJSON(w, e.status, e.body())
}
