package httpapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// tlsNow is the fixed time of the TLS tests: certificates are issued
// around it, the server checks them at it and the clients verify at it.
var tlsNow = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// testCA is a certificate authority generated for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: tlsNow.Add(-24 * time.Hour), NotAfter: tlsNow.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns the PEM certificate and key of a server certificate for
// 127.0.0.1 and "localhost" with serial, valid from notBefore to notAfter.
func (ca *testCA) issue(t testing.TB, serial int64, notBefore, notAfter time.Time) pemPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "agentgate test"},
		NotBefore: notBefore, NotAfter: notAfter,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemPair{pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})}
}

// pemPair is a PEM certificate and its PEM private key.
type pemPair struct{ cert, key []byte }

// valid issues a certificate valid around tlsNow.
func (ca *testCA) valid(t testing.TB, serial int64) pemPair {
	return ca.issue(t, serial, tlsNow.Add(-time.Hour), tlsNow.Add(24*time.Hour))
}

// writeAtomic replaces path with b as a new file renamed over it, as
// certificate managers do.
func writeAtomic(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// tlsGate serves h over TLS with the pair in dir's cert.pem and key.pem
// (through a CertReloader) and returns the reloader and the address.
func tlsGate(t *testing.T, dir string, h http.Handler, lim ConnLimit) (*CertReloader, string) {
	t.Helper()
	r, err := LoadCert(CertOptions{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"), Clock: func() time.Time { return tlsNow },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := ListenForTLS("127.0.0.1:0", lim)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", h)
	srv.TLSConfig = TLSConfig(r.GetCertificate)
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return r, ln.Addr().String()
}

// pairDir writes a pair into a fresh directory.
func pairDir(t *testing.T, p pemPair) string {
	t.Helper()
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "cert.pem"), p.cert)
	writeAtomic(t, filepath.Join(dir, "key.pem"), p.key)
	return dir
}

var protoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) })

// handshake dials addr with cfg (trusting pool, verifying at tlsNow) and
// returns the connection's state.
func handshake(addr string, pool *x509.CertPool, cfg *tls.Config) (tls.ConnectionState, error) {
	cfg.RootCAs, cfg.ServerName, cfg.Time = pool, "127.0.0.1", func() time.Time { return tlsNow }
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.ConnectionState(), nil
}

// QWED protocol v1.0 §10.5 (TLS 1.2+ required): TLS 1.0 and 1.1 are
// refused, 1.2 and 1.3 accepted; TLS 1.2 negotiates an ECDHE AEAD suite
// and a client offering only CBC or RSA key exchange is refused.
func TestTLS_Protocol10_5_VersionsAndSuites(t *testing.T) {
	ca := newTestCA(t, "ca one")
	_, addr := tlsGate(t, pairDir(t, ca.valid(t, 1)), protoHandler, ConnLimit{})

	for _, v := range []uint16{tls.VersionTLS10, tls.VersionTLS11} {
		if _, err := handshake(addr, ca.pool, &tls.Config{MinVersion: v, MaxVersion: v}); err == nil {
			t.Fatalf("%s: handshake succeeded, want refused", tls.VersionName(v))
		}
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		st, err := handshake(addr, ca.pool, &tls.Config{MinVersion: v, MaxVersion: v})
		if err != nil {
			t.Fatalf("%s: %v", tls.VersionName(v), err)
		}
		if st.Version != v {
			t.Fatalf("negotiated %s, want %s", tls.VersionName(st.Version), tls.VersionName(v))
		}
		if v == tls.VersionTLS12 && !strings.Contains(tls.CipherSuiteName(st.CipherSuite), "ECDHE_ECDSA_WITH_AES_128_GCM") {
			t.Fatalf("TLS 1.2 suite %s, want ECDHE with AES-GCM", tls.CipherSuiteName(st.CipherSuite))
		}
	}
	for _, suite := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_RSA_WITH_AES_128_GCM_SHA256} {
		cfg := &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
		if _, err := handshake(addr, ca.pool, cfg); err == nil {
			t.Fatalf("TLS 1.2 with only %s: handshake succeeded, want refused", tls.CipherSuiteName(suite))
		}
	}
}

// QWED protocol v1.0 §3.3 (HTTP/1.1 or HTTP/2): over TLS, ALPN
// negotiates h2, and a request through Go's client (ForceAttemptHTTP2) is
// served over HTTP/2; a client that offers only http/1.1 is served too.
func TestTLS_Protocol3_3_HTTP2OverTLS(t *testing.T) {
	ca := newTestCA(t, "ca one")
	_, addr := tlsGate(t, pairDir(t, ca.valid(t, 1)), protoHandler, ConnLimit{})

	st, err := handshake(addr, ca.pool, &tls.Config{NextProtos: []string{"h2", "http/1.1"}})
	if err != nil || st.NegotiatedProtocol != "h2" {
		t.Fatalf("ALPN: %q, %v; want h2", st.NegotiatedProtocol, err)
	}
	get := func(tr *http.Transport) (*http.Response, string) {
		t.Helper()
		tr.TLSClientConfig = &tls.Config{RootCAs: ca.pool, Time: func() time.Time { return tlsNow }}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://127.0.0.1" + addr[strings.LastIndex(addr, ":"):] + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, served := get(&http.Transport{ForceAttemptHTTP2: true})
	if resp.ProtoMajor != 2 || served != "HTTP/2.0" || resp.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("HTTP/2 client: answered over %s, handler saw %s, ALPN %q; want HTTP/2.0", resp.Proto, served, resp.TLS.NegotiatedProtocol)
	}
	resp, served = get(&http.Transport{})
	if resp.ProtoMajor != 1 || served != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 client: answered over %s, handler saw %s", resp.Proto, served)
	}
}

// h2cGet sends a prior-knowledge cleartext HTTP/2 request to addr.
func h2cGet(addr string) (*http.Response, error) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

// QWED protocol v1.0 §3.3: cleartext HTTP/2 (h2c, prior knowledge) is
// refused by the gate's server unless Protocols(true) allows it; HTTP/1.1
// is served either way.
func TestTLS_Protocol3_3_H2COffByDefault(t *testing.T) {
	serve := func(h2c bool) string {
		ln, err := Listen("127.0.0.1:0", ConnLimit{})
		if err != nil {
			t.Fatal(err)
		}
		srv := NewServer("", protoHandler)
		if h2c {
			srv.Protocols = Protocols(true)
		}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	off := serve(false)
	if resp, err := h2cGet(off); err == nil {
		t.Fatalf("h2c request on the default server: %s %d, want refused", resp.Proto, resp.StatusCode)
	}
	resp, err := http.Get("http://" + off + "/")
	if err != nil || resp.ProtoMajor != 1 {
		t.Fatalf("HTTP/1.1 on the default server: %v %v", resp, err)
	}
	resp.Body.Close()
	on := serve(true)
	if resp, err := h2cGet(on); err != nil || resp.ProtoMajor != 2 {
		t.Fatalf("h2c request with h2c on: %v %v, want HTTP/2", resp, err)
	}
}

// servedSerial is the serial of the certificate a new connection to addr
// is served, verified against pool.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) int64 {
	t.Helper()
	st, err := handshake(addr, pool, &tls.Config{})
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return st.PeerCertificates[0].SerialNumber.Int64()
}

// QWED protocol v1.0 §10.5: the certificate is replaced without a
// restart. Files replaced by a pair of another CA are served from the
// next handshake on; unchanged files are not reloaded; a bad new pair (a
// key of another certificate, garbage, an expired certificate, a missing
// file) keeps the pair in use, and is not tried again until a file
// changes; Reload (SIGHUP) loads whatever the files hold.
func TestTLS_Protocol10_5_CertReload(t *testing.T) {
	ca1, ca2 := newTestCA(t, "ca one"), newTestCA(t, "ca two")
	dir := pairDir(t, ca1.valid(t, 1))
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	r, addr := tlsGate(t, dir, protoHandler, ConnLimit{})
	if got := servedSerial(t, addr, ca1.pool); got != 1 {
		t.Fatalf("serial %d, want 1", got)
	}
	if tried, err := r.ReloadIfChanged(); tried || err != nil {
		t.Fatalf("unchanged files: tried %v, %v", tried, err)
	}

	p2 := ca2.valid(t, 2)
	cert2, key2 := p2.cert, p2.key
	writeAtomic(t, certFile, cert2)
	writeAtomic(t, keyFile, key2)
	if tried, err := r.ReloadIfChanged(); !tried || err != nil {
		t.Fatalf("replaced files: tried %v, %v", tried, err)
	}
	if got := servedSerial(t, addr, ca2.pool); got != 2 {
		t.Fatalf("after the reload: serial %d, want 2", got)
	}
	if _, err := handshake(addr, ca1.pool, &tls.Config{}); err == nil {
		t.Fatal("the old CA still verifies the served certificate")
	}

	cert3 := ca1.valid(t, 3).cert
	expired := ca1.issue(t, 4, tlsNow.Add(-48*time.Hour), tlsNow.Add(-24*time.Hour))
	bad := []struct {
		name       string
		cert, key  []byte
		missingKey bool
		want       string
	}{
		{"key of another certificate", cert3, key2, false, "private key does not match"},
		{"garbage key", cert2, []byte("not a key"), false, "failed to find any PEM data"},
		{"expired certificate", expired.cert, expired.key, false, "not now"},
		{"missing key", cert2, nil, true, "no such file"},
	}
	for _, b := range bad {
		writeAtomic(t, certFile, b.cert)
		if b.missingKey {
			if err := os.Remove(keyFile); err != nil {
				t.Fatal(err)
			}
		} else {
			writeAtomic(t, keyFile, b.key)
		}
		tried, err := r.ReloadIfChanged()
		if !tried || err == nil || !strings.Contains(err.Error(), b.want) {
			t.Fatalf("%s: tried %v, %v; want an error with %q", b.name, tried, err, b.want)
		}
		if got := servedSerial(t, addr, ca2.pool); got != 2 {
			t.Fatalf("%s: serial %d served, want the old pair (2)", b.name, got)
		}
		if tried, _ := r.ReloadIfChanged(); tried {
			t.Fatalf("%s: a failed pair is tried again though no file changed", b.name)
		}
		if err := r.Reload(); err == nil {
			t.Fatalf("%s: Reload succeeded", b.name)
		}
	}

	writeAtomic(t, keyFile, key2)
	writeAtomic(t, certFile, cert2)
	p5 := ca1.valid(t, 5)
	if err := os.WriteFile(certFile, p5.cert, 0o600); err != nil { // in place: same file, new contents
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, p5.key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := servedSerial(t, addr, ca1.pool); got != 5 {
		t.Fatalf("after Reload: serial %d, want 5", got)
	}

	reg := prometheus.NewRegistry()
	if err := r.Register(reg); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		m := mf.GetMetric()[0]
		got[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	want := map[string]float64{
		"agentgate_tls_certificate_not_after_seconds": float64(tlsNow.Add(24 * time.Hour).Unix()),
		"agentgate_tls_reload_failures_total":         float64(2 * len(bad)), // each bad pair: its check and Reload
	}
	if !maps.Equal(got, want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}

// A key file CheckKeyFile refuses at a reload keeps the pair in use;
// once its permissions are fixed (a chmod, no new contents) the next
// check loads it.
func TestTLS_Protocol10_5_ReloadAfterChmod(t *testing.T) {
	ca := newTestCA(t, "ca one")
	dir := pairDir(t, ca.valid(t, 1))
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	private := func(path string) error {
		fi, err := os.Stat(path)
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			err = errors.New("key file open to other users")
		}
		return err
	}
	r, err := LoadCert(CertOptions{CertFile: certFile, KeyFile: keyFile, CheckKeyFile: private, Clock: func() time.Time { return tlsNow }})
	if err != nil {
		t.Fatal(err)
	}
	p2 := ca.valid(t, 2)
	writeAtomic(t, certFile, p2.cert)
	writeAtomic(t, keyFile, p2.key)
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if tried, err := r.ReloadIfChanged(); !tried || err == nil {
		t.Fatalf("open key file: tried %v, %v; want refused", tried, err)
	}
	if c, _ := r.GetCertificate(nil); c.Leaf.SerialNumber.Int64() != 1 {
		t.Fatalf("serial %d after a refused reload, want 1", c.Leaf.SerialNumber.Int64())
	}
	if err := os.Chmod(keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if tried, err := r.ReloadIfChanged(); !tried || err != nil {
		t.Fatalf("after chmod 0600: tried %v, %v", tried, err)
	}
	if c, _ := r.GetCertificate(nil); c.Leaf.SerialNumber.Int64() != 2 {
		t.Fatalf("serial %d after the chmod, want 2", c.Leaf.SerialNumber.Int64())
	}
}

// Reloads racing handshakes: every handshake is served a whole pair (a
// certificate with its own key, so the client's check of the handshake
// signature passes), the old one or the new one, while the files flip
// between two CAs' pairs and are reloaded.
func TestTLS_Protocol10_5_ReloadDuringHandshakes(t *testing.T) {
	ca1, ca2 := newTestCA(t, "ca one"), newTestCA(t, "ca two")
	pairs := []pemPair{ca1.valid(t, 1), ca2.valid(t, 2)}
	dir := pairDir(t, pairs[0])
	r, addr := tlsGate(t, dir, protoHandler, ConnLimit{})
	both := x509.NewCertPool()
	both.AddCert(ca1.cert)
	both.AddCert(ca2.cert)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for range 25 {
				if _, err := handshake(addr, both, &tls.Config{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i := range 50 {
		p := pairs[i%2]
		writeAtomic(t, filepath.Join(dir, "key.pem"), p.key)
		writeAtomic(t, filepath.Join(dir, "cert.pem"), p.cert)
		_ = r.Reload() // may read a key of one pair and a certificate of the other: refused, logged
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a handshake during the reloads: %v", err)
	}
}

// LoadCert refuses what it cannot serve, naming it: one file only, a
// pair that does not match, a key file CheckKeyFile refuses, a file over
// its bound.
func TestTLS_Protocol10_5_LoadRefusals(t *testing.T) {
	ca := newTestCA(t, "ca one")
	otherKey := ca.valid(t, 2).key
	dir := pairDir(t, ca.valid(t, 1))
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, err := LoadCert(CertOptions{CertFile: certFile}); err == nil || !strings.Contains(err.Error(), "both required") {
		t.Fatalf("no key file: %v", err)
	}
	errPerm := errors.New("key file is readable by other users")
	_, err := LoadCert(CertOptions{CertFile: certFile, KeyFile: keyFile, Clock: func() time.Time { return tlsNow },
		CheckKeyFile: func(string) error { return errPerm }})
	if !errors.Is(err, errPerm) {
		t.Fatalf("CheckKeyFile refusal: %v", err)
	}
	writeAtomic(t, keyFile, otherKey)
	if _, err := LoadCert(CertOptions{CertFile: certFile, KeyFile: keyFile, Clock: func() time.Time { return tlsNow }}); err == nil {
		t.Fatal("mismatched pair loaded")
	}
	writeAtomic(t, certFile, make([]byte, MaxCertFileBytes+1))
	if _, err := LoadCert(CertOptions{CertFile: certFile, KeyFile: keyFile}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized certificate file: %v", err)
	}
}

// Issue 11's connection caps over TLS: a connection over the cap is
// closed before its handshake (no plaintext answer), and its slot is
// given back when a served connection closes.
func TestTLS_ConnectionCapClosesQuietly(t *testing.T) {
	ca := newTestCA(t, "ca one")
	_, addr := tlsGate(t, pairDir(t, ca.valid(t, 1)), protoHandler, ConnLimit{PerAddress: 1})
	cfg := &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1", Time: func() time.Time { return tlsNow }}
	first, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	over, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	_ = over.SetDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(over); err != nil || len(b) != 0 {
		t.Fatalf("the connection over the cap got %q (%v), want closed without an answer", b, err)
	}
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := handshake(addr, ca.pool, &tls.Config{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot was not given back: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkTransport measures what HTTPS and HTTP/2 add to a request:
// one small GET at a time over a real loopback socket to a handler that
// writes its protocol, through the gate's server (NewServer, TLSConfig),
// on a kept-alive connection in cleartext HTTP/1.1, HTTP/1.1 over TLS
// and HTTP/2 over TLS, and with a new connection (a full TLS 1.3
// handshake, ECDSA P-256) per request.
func BenchmarkTransport(b *testing.B) {
	ca := newTestCA(b, "bench ca")
	p := ca.valid(b, 1)
	pair, err := tls.X509KeyPair(p.cert, p.key)
	if err != nil {
		b.Fatal(err)
	}
	serve := func(tlsOn bool) string {
		ln, err := Listen("127.0.0.1:0", ConnLimit{})
		if err != nil {
			b.Fatal(err)
		}
		srv := NewServer("", protoHandler)
		if tlsOn {
			srv.TLSConfig = TLSConfig(func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &pair, nil })
			go func() { _ = srv.ServeTLS(ln, "", "") }()
		} else {
			go func() { _ = srv.Serve(ln) }()
		}
		b.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	plain, secure := serve(false), serve(true)
	// A config of its own per transport: an HTTP/2 transport adds "h2"
	// to its config's NextProtos.
	clientTLS := func() *tls.Config { return &tls.Config{RootCAs: ca.pool, Time: func() time.Time { return tlsNow }} }
	for _, c := range []struct {
		name, url, proto string
		tr               *http.Transport
	}{
		{"http1-cleartext", "http://" + plain + "/", "HTTP/1.1", &http.Transport{}},
		{"http1-tls", "https://" + secure + "/", "HTTP/1.1", &http.Transport{TLSClientConfig: clientTLS()}},
		{"http2-tls", "https://" + secure + "/", "HTTP/2.0", &http.Transport{TLSClientConfig: clientTLS(), ForceAttemptHTTP2: true}},
		{"tls13-handshake-per-request", "https://" + secure + "/", "HTTP/1.1", &http.Transport{TLSClientConfig: clientTLS(), DisableKeepAlives: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: c.tr}
			defer c.tr.CloseIdleConnections()
			buf := make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Get(c.url)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.ReadFull(resp.Body, buf[:len(c.proto)])
				resp.Body.Close()
				if string(buf[:n]) != c.proto {
					b.Fatalf("served over %q, want %s", buf[:n], c.proto)
				}
			}
		})
	}
}
