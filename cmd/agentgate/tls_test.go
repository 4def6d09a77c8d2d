package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// certAuthority is a CA generated for a test; it issues server
// certificates for 127.0.0.1.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newCertAuthority(t *testing.T) *certAuthority {
	t.Helper()
	ca := &certAuthority{pool: x509.NewCertPool()}
	ca.cert, ca.key = ca.sign(t, &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign})
	ca.pool.AddCert(ca.cert)
	return ca
}

// sign fills tmpl's validity (an hour ago to a day on, the gate checks
// at the real time) and signs it with ca (itself when ca.cert is nil).
func (ca *certAuthority) sign(t *testing.T, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	parent, signer := tmpl, key
	if ca.cert != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// writePair issues a server certificate with serial and writes it and
// its key to certFile and keyFile (0600, each a new file renamed over
// the old).
func (ca *certAuthority) writePair(t *testing.T, serial int64, certFile, keyFile string) {
	t.Helper()
	cert, key := ca.sign(t, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "agentgate"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	replaceFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
}

func replaceFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// servedSerial is the serial of the certificate a new TLS connection to
// addr is served when it trusts pool (0: the handshake failed).
func servedSerial(addr string, pool *x509.CertPool) int64 {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		return 0
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// waitServed waits until addr serves the certificate with serial.
func waitServed(t *testing.T, addr string, pool *x509.CertPool, serial int64, log *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for servedSerial(addr, pool) != serial {
		if time.Now().After(deadline) {
			t.Fatalf("serial %d never served on %s:\n%s", serial, addr, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// httpsClient trusts pool and speaks HTTP/2 when the server offers it.
func httpsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
}

// startTLSServe starts `agentgate serve args` with env and waits until it
// answers GET /healthz over HTTPS (trusting pool).
func startTLSServe(t *testing.T, bin string, pool *x509.CertPool, args, env []string) (*exec.Cmd, *syncBuffer, string) {
	t.Helper()
	cmd, out := cliStart(t, bin, args, env)
	addr := announcedAddr(t, out, "serve with TLS", 30*time.Second)
	if !strings.Contains(out.String(), "agentgate listening on https://"+addr) {
		t.Fatalf("serve with a certificate announced no https address:\n%s", out)
	}
	c := httpsClient(pool)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := c.Get("https://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, out, addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %v never healthy over HTTPS on %s:\n%s", args, addr, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkHTTPS checks a gate on addr over HTTPS: a TLS 1.1 client is
// refused, HTTP/2 is negotiated and serves an authenticated read, and
// plain HTTP gets no answer from the gate.
func checkHTTPS(t *testing.T, addr string, pool *x509.CertPool) {
	t.Helper()
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}); err == nil {
		c.Close()
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/approvals", nil)
	req.Header.Set("X-API-Key", "admin-key")
	resp, err := httpsClient(pool).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
		t.Fatalf("GET /approvals over HTTPS: %s %d %s, want HTTP/2 200", resp.Proto, resp.StatusCode, body)
	}
	resp, err = httpsClient(pool).Get("https://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\nagentgate_tls_certificate_not_after_seconds ") || !strings.Contains(string(body), "\nagentgate_tls_reload_failures_total ") {
		t.Fatalf("GET /metrics lacks the TLS metrics:\n%s", body)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain HTTP is served on the TLS port")
		}
	}
}

// QWED protocol v1.0 §3.3 and §10.5 through the real binary: `serve
// --tls-cert --tls-key` serves HTTPS (TLS 1.2+, HTTP/2), takes a renewed
// pair of another CA from its files without a restart (watched every
// --tls-reload-interval), keeps the pair in use when the new files do not
// load, and reloads on SIGHUP; the flags also come from AGENTGATE_TLS_*.
func TestServeTLS_Protocol10_5_HTTPSAndReload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca1, ca2 := newCertAuthority(t), newCertAuthority(t)
	ca1.writePair(t, 1, certFile, keyFile)
	cmd, log, addr := startTLSServe(t, bin, ca1.pool,
		[]string{"--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--api-key", "admin-key", "--tls-reload-interval", "50ms"},
		[]string{"AGENTGATE_TLS_CERT=" + certFile, "AGENTGATE_TLS_KEY=" + keyFile})
	checkHTTPS(t, addr, ca1.pool)

	ca2.writePair(t, 2, certFile, keyFile)
	waitServed(t, addr, ca2.pool, 2, log)

	// A key that is not the certificate's: the pair in use stays.
	replaceFile(t, keyFile, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(log.String(), "reloading the TLS certificate (the certificate in use is unchanged)") {
		if time.Now().After(deadline) {
			t.Fatalf("the bad key was never tried:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := servedSerial(addr, ca2.pool); got != 2 {
		t.Fatalf("after a bad key: serial %d served, want 2 (the pair in use)", got)
	}
	cliStop(t, cmd)

	// Without the watch, SIGHUP loads the files.
	ca1.writePair(t, 3, certFile, keyFile)
	cmd, log, addr = startTLSServe(t, bin, ca1.pool,
		[]string{"--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--api-key", "admin-key", "--tls-cert", certFile, "--tls-key", keyFile, "--tls-reload-interval", "0"}, nil)
	ca2.writePair(t, 4, certFile, keyFile)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitServed(t, addr, ca2.pool, 4, log)
	checkHTTPS(t, addr, ca2.pool)
	cliStop(t, cmd)
}

// QWED protocol v1.0 §10.5 in Kafka mode: the same listener, HTTPS and
// HTTP/2, in front of the partition workers.
func TestServeTLS_Protocol10_5_Kafka(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	broker := devKafkaProcess(t, bin, filepath.Join(dir, "broker"))
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca := newCertAuthority(t)
	ca.writePair(t, 7, certFile, keyFile)
	cmd, _, addr := startTLSServe(t, bin, ca.pool, []string{"--kafka-brokers", broker, "--kafka-partitions", "2", "--data", filepath.Join(dir, "gate"),
		"--http", "127.0.0.1:0", "--api-key", "admin-key", "--z3-procs", "1", "--tls-cert", certFile, "--tls-key", keyFile}, nil)
	checkHTTPS(t, addr, ca.pool)
	cliStop(t, cmd)
}

// serve refuses TLS settings it cannot serve, before it opens a store:
// one file of the pair, h2c with TLS, a key file others may read, a pair
// that does not match.
func TestServeTLS_Protocol10_5_Refusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	ca := newCertAuthority(t)
	ca.writePair(t, 1, certFile, keyFile)
	otherKey := filepath.Join(dir, "other-key.pem")
	ca.writePair(t, 2, filepath.Join(dir, "other-cert.pem"), otherKey)
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"cert without key", []string{"--tls-cert", certFile}, "--tls-cert and --tls-key go together"},
		{"h2c with TLS", []string{"--tls-cert", certFile, "--tls-key", keyFile, "--h2c"}, "--h2c is cleartext HTTP/2"},
		{"mismatched pair", []string{"--tls-cert", certFile, "--tls-key", otherKey}, "private key does not match"},
		{"world-readable key", []string{"--tls-cert", certFile, "--tls-key", keyFile, "chmod 0644"}, "tls-key: " + keyFile + " has mode -rw-r--r--: readable by its group and other users"},
	} {
		args := c.args
		if args[len(args)-1] == "chmod 0644" {
			args = args[:len(args)-1]
			if err := os.Chmod(keyFile, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, code := cliRun(t, bin, append([]string{"serve", "--data", data, "--http", "127.0.0.1:0"}, args...)...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Fatalf("%s: exit %d, output:\n%s\nwant a refusal with %q", c.name, code, out, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%s: the data dir was created (%v): a store was opened before the refusal", c.name, err)
		}
	}
}

// QWED protocol v1.0 §3.3: a cleartext gate refuses prior-knowledge h2c
// unless --h2c, and serves HTTP/1.1 either way.
func TestServeTLS_Protocol3_3_H2C(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	h2c := func(addr string) (*http.Response, error) {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &p}}).Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	cmd, _, addr := cliServe(t, bin, []string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "admin-key"}, nil)
	if resp, err := h2c(addr); err == nil {
		t.Fatalf("h2c on a default gate: %s %d, want refused", resp.Proto, resp.StatusCode)
	}
	cliStop(t, cmd)
	cmd, _, addr = cliServe(t, bin, []string{"--data", t.TempDir(), "--http", "127.0.0.1:0", "--api-key", "admin-key", "--h2c"}, nil)
	if resp, err := h2c(addr); err != nil || resp.ProtoMajor != 2 {
		t.Fatalf("h2c with --h2c: %v %v, want HTTP/2", resp, err)
	}
	cliStop(t, cmd)
}
