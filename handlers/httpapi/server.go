package httpapi

import (
	"net/http"
	"time"
)

// Server limits (NewServer).
const (
	// ReadHeaderTimeout bounds reading a request's headers (slowloris).
	ReadHeaderTimeout = 5 * time.Second
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout = 30 * time.Second
	// WriteTimeout bounds a request from the end of its headers to the end
	// of the answer: longer than DefaultRequestTimeout, so that a slow
	// decision is answered with QWED-ENG-003 rather than a cut connection.
	WriteTimeout = 30 * time.Second
	// IdleTimeout is how long a keep-alive connection waits for its next
	// request.
	IdleTimeout = 120 * time.Second
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes = 64 << 10
)

// NewServer returns an *http.Server for h on addr with the timeouts and
// header limit above; keep-alive stays on. It speaks HTTP/1.1, and HTTP/2
// when served over TLS (at most MaxConcurrentStreams requests at once per
// connection); cleartext HTTP/2 is off (set Protocols(true) to allow
// it). The caller starts it (Serve, or ServeTLS with TLSConfig) and stops
// it (Shutdown).
func NewServer(addr string, h http.Handler) *http.Server {
	s := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		Protocols:         Protocols(false),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: MaxConcurrentStreams},
	}
	s.SetKeepAlivesEnabled(true)
	return s
}
