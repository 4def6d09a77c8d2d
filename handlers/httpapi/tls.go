package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTPS and HTTP/2 (QWED protocol v1.0 §3.3 and §10.5): the gate serves
// TLS 1.2 or 1.3 only, TLS 1.2 with forward-secret AEAD suites only, and
// offers HTTP/2 by ALPN ("h2") beside HTTP/1.1. The certificate is read
// from two PEM files and read again when they change (CertReloader), so
// that a renewed certificate is served without a restart. Cleartext
// HTTP/2 (h2c) is off unless asked for (Protocols).

// Bounds of the TLS files and of HTTP/2.
const (
	// MaxCertFileBytes bounds the certificate chain file.
	MaxCertFileBytes = 1 << 20
	// MaxKeyFileBytes bounds the private key file.
	MaxKeyFileBytes = 64 << 10
	// MaxConcurrentStreams is the most requests one HTTP/2 connection
	// carries at once (the RFC 9113 §6.5.2 advice of at least 100), so that
	// the per-address connection cap still bounds what one client holds
	// open: 256 connections of 100 streams.
	MaxConcurrentStreams = 100
	// DefaultCertCheckInterval is how often a CertReloader's Watch looks
	// at its files (serve's --tls-reload-interval).
	DefaultCertCheckInterval = 30 * time.Second
)

// tls12Suites are the TLS 1.2 cipher suites the gate accepts: ECDHE key
// exchange (forward secrecy) with an AEAD cipher. CBC, RSA key exchange
// and 3DES are left out whatever GODEBUG says. TLS 1.3's suites are all
// AEAD and not configurable.
var tls12Suites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSConfig returns the gate's TLS server configuration: TLS 1.2 at least,
// the TLS 1.2 suites above, the certificate getCert returns for each
// handshake, and ALPN offering "h2" then "http/1.1" (http.Server.ServeTLS
// keeps this order).
func TLSConfig(getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   tls12Suites,
		GetCertificate: getCert,
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

// Protocols returns the protocols the gate's server speaks: HTTP/1.1, and
// HTTP/2 over TLS; cleartext HTTP/2 with prior knowledge (h2c) only when
// h2c is true (for a TLS-terminating proxy that talks HTTP/2 to the gate).
func Protocols(h2c bool) *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(h2c)
	return p
}

// ListenForTLS is Listen for a server whose connections speak TLS: a
// connection over a cap is closed without an answer, before its
// handshake (a plaintext HTTP refusal would be unreadable to a TLS client,
// and a handshake would spend the CPU a connection flood is after).
func ListenForTLS(addr string, lim ConnLimit) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return limitWith(ln, lim, true), nil
}

// CertOptions configure a CertReloader.
type CertOptions struct {
	// CertFile is the PEM certificate chain, leaf first.
	CertFile string
	// KeyFile is the leaf's PEM private key.
	KeyFile string
	// CheckKeyFile, when set, vets KeyFile before every load (its owner
	// and permissions); an error fails the load.
	CheckKeyFile func(path string) error
	// Clock is the time a certificate must be valid at when it is loaded;
	// nil is time.Now.
	Clock func() time.Time
	// Logger receives the reloads and their failures; nil is
	// slog.Default().
	Logger *slog.Logger
}

// CertReloader holds the gate's certificate and loads it again from its
// files on Reload, or on Watch's ticks when a file changed. A load that
// fails (a file unreadable or too large, a key that does not match the
// certificate, a certificate not valid now, CheckKeyFile's refusal) keeps
// the certificate in use and is logged. GetCertificate returns the
// current pair; a handshake sees either the old pair or the new one whole.
type CertReloader struct {
	opts CertOptions
	cur  atomic.Pointer[tls.Certificate]

	mu   sync.Mutex // serializes loads; guards seen
	seen [2]fileStamp

	failures atomic.Int64 // reloads that kept the pair in use
}

// Register adds the reloader's metrics to reg: the served certificate's
// notAfter (agentgate_tls_certificate_not_after_seconds, Unix seconds:
// alert on it minus time()) and the reloads that failed and kept the
// pair in use (agentgate_tls_reload_failures_total).
func (r *CertReloader) Register(reg prometheus.Registerer) error {
	return errors.Join(
		reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "agentgate_tls_certificate_not_after_seconds",
			Help: "When the served TLS certificate expires (Unix seconds).",
		}, func() float64 { return float64(r.cur.Load().Leaf.NotAfter.Unix()) })),
		reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agentgate_tls_reload_failures_total",
			Help: "TLS certificate reloads that failed and kept the certificate in use.",
		}, func() float64 { return float64(r.failures.Load()) })),
	)
}

// fileStamp tells whether a file changed: its identity (device and inode:
// a file renamed over it, as Kubernetes and cert managers do, is a new
// one), size, modification time and status change time (a chmod that
// makes a refused key file acceptable changes only the latter).
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // Unix nanoseconds
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.dev, s.ino, s.ctime = uint64(st.Dev), st.Ino, st.Ctim.Nano()
	}
	return s, nil
}

// LoadCert loads the pair o names; an error is the reason it does not
// load (serve refuses to start on it).
func LoadCert(o CertOptions) (*CertReloader, error) {
	if o.CertFile == "" || o.KeyFile == "" {
		return nil, errors.New("loading TLS certificate: a certificate file and a key file are both required")
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	r := &CertReloader{opts: o}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

// GetCertificate returns the current pair (tls.Config.GetCertificate).
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// Reload loads the files again whether or not they changed (serve does on
// SIGHUP). On an error the pair in use stays; the error is logged and
// returned.
func (r *CertReloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logged(r.load())
}

// ReloadIfChanged loads the files again when either changed since the
// last load or load attempt (a failed pair is not tried again until a
// file changes once more). It reports whether it tried; an error is
// logged and returned, and the pair in use stays.
func (r *CertReloader) ReloadIfChanged() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, errC := stampOf(r.opts.CertFile)
	k, errK := stampOf(r.opts.KeyFile)
	if errC == nil && errK == nil && [2]fileStamp{c, k} == r.seen {
		return false, nil
	}
	if err := errors.Join(errC, errK); err != nil && r.seen == [2]fileStamp{} {
		// Missing again since the last attempt: said once already.
		return false, nil
	}
	return true, r.logged(r.load())
}

// Watch calls ReloadIfChanged every interval until ctx ends.
func (r *CertReloader) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = r.ReloadIfChanged()
		}
	}
}

// logged logs the outcome of a reload.
func (r *CertReloader) logged(err error) error {
	if err != nil {
		r.failures.Add(1)
		r.opts.Logger.Error("reloading the TLS certificate (the certificate in use is unchanged)", "err", err)
		return err
	}
	leaf := r.cur.Load().Leaf
	r.opts.Logger.Info("reloaded the TLS certificate", "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// load reads and checks the pair and makes it current; r.mu is held. The
// stamps are taken before the reads, so that a file written during them
// is loaded again at the next tick.
func (r *CertReloader) load() error {
	c, errC := stampOf(r.opts.CertFile)
	k, errK := stampOf(r.opts.KeyFile)
	r.seen = [2]fileStamp{c, k}
	if err := errors.Join(errC, errK); err != nil {
		r.seen = [2]fileStamp{}
		return fmt.Errorf("loading TLS certificate: %w", err)
	}
	if r.opts.CheckKeyFile != nil {
		if err := r.opts.CheckKeyFile(r.opts.KeyFile); err != nil {
			return fmt.Errorf("loading TLS certificate: %w", err)
		}
	}
	certPEM, err := readBounded(r.opts.CertFile, MaxCertFileBytes)
	if err != nil {
		return fmt.Errorf("loading TLS certificate: %w", err)
	}
	keyPEM, err := readBounded(r.opts.KeyFile, MaxKeyFileBytes)
	if err != nil {
		return fmt.Errorf("loading TLS certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("loading TLS certificate from %s and %s: %w", r.opts.CertFile, r.opts.KeyFile, err)
	}
	now := r.opts.Clock()
	if leaf := pair.Leaf; now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return fmt.Errorf("loading TLS certificate from %s: valid from %s to %s, not now (%s)", r.opts.CertFile,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	r.cur.Store(&pair)
	return nil
}

// readBounded reads the file at path, refusing one over max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", path, max)
	}
	return b, nil
}
