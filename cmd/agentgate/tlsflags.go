package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/handlers/httpapi"
)

// tlsFlags configure HTTPS and HTTP/2 (QWED protocol v1.0 §3.3, §10.5):
// the certificate files, how often they are looked at for a renewal, and
// cleartext HTTP/2.
type tlsFlags struct {
	cert, key string
	interval  time.Duration
	h2c       bool
	// certs is the loaded pair once start has run (nil without TLS).
	certs *httpapi.CertReloader
}

func addTLSFlags(f *pflag.FlagSet) *tlsFlags {
	o := &tlsFlags{}
	f.StringVar(&o.cert, "tls-cert", "", "PEM certificate chain, leaf first: serve HTTPS (TLS 1.2 or 1.3, HTTP/2 by ALPN) instead of HTTP; needs --tls-key")
	f.StringVar(&o.key, "tls-key", "", "PEM private key of --tls-cert: owned by the gate's user with no group or other access, or by root and at most group-readable")
	f.DurationVar(&o.interval, "tls-reload-interval", httpapi.DefaultCertCheckInterval, "how often the --tls-cert and --tls-key files are checked and, when changed, loaded again (also on SIGHUP; 0: on SIGHUP only); a bad new pair keeps the one in use")
	f.BoolVar(&o.h2c, "h2c", false, "also accept cleartext HTTP/2 with prior knowledge (h2c), for a TLS-terminating proxy that speaks HTTP/2 to the gate; not with --tls-cert")
	return o
}

func (o *tlsFlags) enabled() bool { return o.cert != "" || o.key != "" }

// validate checks the flags together.
func (o *tlsFlags) validate() error {
	switch {
	case (o.cert == "") != (o.key == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case o.h2c && o.enabled():
		return errors.New("--h2c is cleartext HTTP/2: with --tls-cert, HTTP/2 is negotiated over TLS")
	case o.interval < 0:
		return errors.New("--tls-reload-interval must not be negative")
	}
	return nil
}

// register adds the certificate's metrics to reg (nothing without TLS).
func (o *tlsFlags) register(reg *prometheus.Registry) error {
	if o == nil || o.certs == nil {
		return nil
	}
	return o.certs.Register(reg)
}

// start loads the certificate (an error is why serve does not start) and
// reloads it on SIGHUP and, every --tls-reload-interval, when its files
// changed, until stop. checkKey vets the key file before each load. It
// does nothing without --tls-cert.
func (o *tlsFlags) start(checkKey func(string) error, log *slog.Logger) (stop func(), err error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if !o.enabled() {
		return func() {}, nil
	}
	if o.certs, err = httpapi.LoadCert(httpapi.CertOptions{CertFile: o.cert, KeyFile: o.key, CheckKeyFile: checkKey, Logger: log}); err != nil {
		return nil, err
	}
	leaf, _ := o.certs.GetCertificate(nil)
	log.Info("serving HTTPS", "cert", o.cert, "subject", leaf.Leaf.Subject.String(), "serial", leaf.Leaf.SerialNumber.String(),
		"not_after", leaf.Leaf.NotAfter.UTC().Format(time.RFC3339), "reload_interval", o.interval)
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = o.certs.Reload() // logged
			}
		}
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		if o.interval > 0 {
			o.certs.Watch(ctx, o.interval)
		}
	}()
	return func() { signal.Stop(hup); cancel(); <-done; <-done }, nil
}
