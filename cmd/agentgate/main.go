// Command agentgate is the one binary of the gate: serve, replay, keys,
// verify-attestation. It wires packages together and has no logic of its own.
package main

//go:generate go test -count=1 -run ^TestReadmeCommandTable$ . -update-readme

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/domain"
	"github.com/agentgate/agentgate/handlers"
	"github.com/agentgate/agentgate/handlers/adapter"
	"github.com/agentgate/agentgate/handlers/attest"
	"github.com/agentgate/agentgate/handlers/command"
	"github.com/agentgate/agentgate/handlers/embedded"
	"github.com/agentgate/agentgate/handlers/history/replay"
	"github.com/agentgate/agentgate/handlers/httpapi"
	"github.com/agentgate/agentgate/handlers/verify"
)

func main() {
	TuneGC()
	if err := newRoot().Execute(); err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			os.Exit(int(ec))
		}
		fmt.Fprintln(os.Stderr, "agentgate:", err)
		os.Exit(1)
	}
}

// exitCode is an error that only sets the exit status (the command has
// already printed its findings).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "agentgate",
		Short:         "A pre-execution verification gate for AI agents",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints what `agentgate version` prints.
		Version: buildVersion(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(serveCmd(), replayCmd(), keysCmd(), verifyAttestationCmd())
	for _, c := range moreCommands {
		root.AddCommand(c())
	}
	noteEnv(root)
	return root
}

// envNote ends the help of every command with flags: bindEnv reads each
// flag from the environment.
const envNote = "Every flag also reads the environment variable AGENTGATE_<FLAG> (the flag's name in capitals,\n" +
	"dashes as underscores: --api-key reads AGENTGATE_API_KEY); a flag given on the command line wins."

// noteEnv appends envNote to the long help of c and of every command under
// it that has flags of its own.
func noteEnv(c *cobra.Command) {
	if c.HasAvailableLocalFlags() && c.Name() != "engine-worker" {
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		c.Long = long + "\n\n" + envNote
	}
	for _, sub := range c.Commands() {
		noteEnv(sub)
	}
}

// moreCommands are the subcommands defined in the other files of this
// package, each registered by an init function of its file (so that a new
// subcommand touches only its own file).
var moreCommands []func() *cobra.Command

// bindEnv makes every flag of cmd settable as AGENTGATE_<FLAG> (dashes
// become underscores), but those marked with noEnvAnnotation; an
// explicit flag wins over the environment.
func bindEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if _, skip := f.Annotations[noEnvAnnotation]; skip {
			return
		}
		name := "AGENTGATE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && !f.Changed {
			if e := f.Value.Set(v); e != nil && err == nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
		}
	})
	return err
}

// logger returns the process's logger (text on stderr) and makes it the
// slog default, so that packages that log through slog.Default (the
// signing keyring) write in the same format.
func logger() *slog.Logger {
	l := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(l)
	return l
}

func serveCmd() *cobra.Command {
	var (
		dataDir, addr, apiKey string
		approvalTTL           time.Duration
		attestTTL             time.Duration
		doomRequired          bool
		drain                 time.Duration
		kafkaOpts             *kafkaFlags
		z3Opts                *z3Flags
		engineOpts            *engineFlags
		rateOpts              *rateFlags
		a2aOpts               *a2aFlags
		executeOpts           *executeFlags
		webhookOpts           *webhookFlags
		proxyOpts             *proxyFlags
		checkpoints           domain.CheckpointPolicy
		minFree               int64
		adapterOpts           *adapterFlags
		tlsOpts               *tlsFlags
		allowInsecureEnv      bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the gate with its HTTP API: on the embedded log (Pebble in --data), or on Kafka with --kafka-brokers",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			log := logger()
			// Before any store opens: the environment's integrity
			// (QWED-Agent spec v1.1 §9.7), then the TLS certificate.
			if _, set := os.LookupEnv("AGENTGATE_ALLOW_INSECURE_ENV"); set {
				log.Warn("AGENTGATE_ALLOW_INSECURE_ENV is ignored: --" + allowInsecureEnvFlag + " is read from the command line only")
			}
			if err := guardEnvironment(processEnv(dataDir, tlsOpts.key), allowInsecureEnv, log); err != nil {
				return err
			}
			checkKey := func(path string) error { return checkTLSKeyFile(path, os.Geteuid()) }
			if allowInsecureEnv {
				checkKey = nil
			}
			stopTLS, err := tlsOpts.start(checkKey, log)
			if err != nil {
				return err
			}
			defer stopTLS()
			// The data dir is this process's (both modes) until it ends.
			unlock, err := lockDataDir(dataDir)
			if err != nil {
				return err
			}
			defer unlock()
			reg := prometheus.NewRegistry()
			metrics := handlers.NewMetrics(reg)
			if err := tlsOpts.register(reg); err != nil {
				return err
			}
			cfg := domain.DefaultConfig()
			cfg.ApprovalTTL = domain.Duration(approvalTTL)
			cfg.DoomLoopGuardRequired = doomRequired
			if cfg.A2A, err = a2aOpts.config(); err != nil {
				return err
			}
			if cfg.Execute, err = executeOpts.config(); err != nil {
				return err
			}
			if kafkaOpts.enabled() {
				kafkaOpts.minFree, kafkaOpts.business = minFree, adapterOpts
				return serveKafka(kafkaOpts, z3Opts, engineOpts, rateOpts, proxyOpts, webhookOpts, dataDir, addr, apiKey, cfg, checkpoints, attestTTL, drain, log)
			}
			solver, closeSolver := startSolver(z3Opts, log)
			defer closeSolver()
			host, err := startEngineHost(engineOpts, log)
			if err != nil {
				return err
			}
			defer host.Close()
			engines, err := verify.NewRegistry(verify.Builtin(verify.BuiltinOptions{Solver: solver, Isolate: host.Isolate})...)
			if err != nil {
				return err
			}
			hooks := webhookOpts.runners(log)
			// The business calls follow the committed batches too (the
			// runner is set before the worker runs).
			var runner *adapter.Runner
			notifyBatch := hooks.onBatch(metrics.OnBatch)
			onBatch := func(evs []*domain.Event, d time.Duration) {
				notifyBatch(evs, d)
				runner.Observe(evs)
			}
			g, err := embedded.OpenGate(embedded.Options{
				DataDir: dataDir, AdminKey: apiKey, Config: &cfg, Logger: log, OnBatch: onBatch,
				Verifier: verify.NewActionVerifier(engines, 0), Checkpoint: checkpoints, AttestationTTL: attestTTL,
				MinFreeBytes: minFree,
			})
			if err != nil {
				return err
			}
			defer g.Close()
			defer reloadKeysOnHangup(g.Keyring, log)()
			qwed, err := verify.New(verify.Config{Registry: engines, Gate: g.Worker, Logger: log})
			if err != nil {
				return err
			}
			caller, err := adapterOpts.caller(g.Keyring, g.NodeID)
			if err != nil {
				return err
			}
			if runner, err = adapter.NewRunner(adapter.RunnerConfig{
				Caller: caller, Gate: g.Worker, Source: adapter.LogSource{State: g.Store, Log: g.Log}, Logger: log,
			}); err != nil {
				return err
			}
			if g.NewAdminKey != "" {
				fmt.Fprintf(os.Stdout, "admin API key (shown once, only its hash is stored in %s): %s\n", dataDir, g.NewAdminKey)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			wctx, wcancel := context.WithCancel(context.Background())
			werr := make(chan error, 1)
			go func() { werr <- g.Worker.Run(wctx) }()
			hctx, hcancel := context.WithCancel(context.Background())
			herr := make(chan error, 1)
			go func() { herr <- hooks.run(hctx, 0, g.Worker, g.Store, g.Keyring) }()
			stopHooks := sync.OnceFunc(func() { hcancel(); <-herr })
			defer stopHooks()
			// Business calls start once the worker runs (the outcomes go
			// through it) and stop before it does.
			stopRunner := runner.Start()

			h := httpapi.New(httpapi.Config{
				Gate: g.Worker, Store: g.Store, AdminKeyHash: g.AdminKeyHash,
				JWKS: g.Keyring.JWKS, Registry: reg, Logger: log, Clock: time.Now, Verify: qwed, Log: g.Log,
				SignTreeHead:    func(c attest.TreeHeadClaims) (string, error) { return g.Keyring.SignTreeHead(g.NodeID, c) },
				VerifyRateLimit: rateOpts.limit(), RefusalLimit: rateOpts.refusalLimit(),
				A2ARateLimit: rateOpts.a2aLimit(), ExecuteRateLimit: rateOpts.executeLimit(), ExecuteMode: cfg.ExecuteConfig().Mode, A2AMaxPayloadBytes: cfg.A2ASettings().MaxPayloadSizeBytes,
				WebhookRateLimit: webhookOpts.limit(), PrincipalWriteRateLimit: rateOpts.principalLimit(),
			})
			h, err = proxyOpts.wrap(h, cfg.A2ASettings().MaxPayloadSizeBytes, log)
			if err == nil {
				h, err = withOpenAPICheck(h, log)
			}
			srv := httpapi.NewServer(addr, h)
			var ln net.Listener
			if err == nil {
				ln, err = rateOpts.listen(srv)
			}
			if err != nil {
				stopHooks()
				stopRunner()
				wcancel()
				<-werr
				return err
			}
			serr := make(chan error, 1)
			go func() { serr <- rateOpts.serve(srv, ln) }()
			rateOpts.announce(ln)
			log.Info("agentgate serving", "http", ln.Addr().String(), "data", dataDir, "node", g.NodeID, "seq", g.Worker.Head().Seq)

			select {
			case <-ctx.Done():
				log.Info("draining in-flight requests")
			case err := <-serr:
				stopHooks()
				stopRunner()
				wcancel()
				<-werr
				return fmt.Errorf("serving HTTP: %w", err)
			}
			sctx, cancel := context.WithTimeout(context.Background(), drain)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				log.Error("shutting down HTTP", "err", err)
			}
			// The runner stops before the worker: an attempt it was
			// recording is recorded, or made again after the restart.
			stopHooks()
			// A call cut short records nothing: the next start makes it
			// again with the same Idempotency-Key.
			stopRunner()
			wcancel()
			if err := <-werr; err != nil {
				return fmt.Errorf("running worker: %w", err)
			}
			log.Info("stopped", "seq", g.Worker.Head().Seq)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data", "./data", "data directory (log, projections, keys)")
	f.StringVar(&addr, "http", "127.0.0.1:8080", "HTTP listen address HOST:PORT (port 0 picks a free one; serve prints \"agentgate listening on http://HOST:PORT\" once it is bound)")
	f.StringVar(&apiKey, "api-key", "", "admin API key (default: minted on first start, hash stored in the data dir)")
	f.DurationVar(&approvalTTL, "approval-ttl", 24*time.Hour, "how long a PENDING approval waits before it expires")
	f.DurationVar(&attestTTL, "attestation-ttl", attest.DefaultAttestationTTL, "how long an attestation is valid after it is issued (its exp claim; 0: no exp)")
	f.BoolVar(&doomRequired, "doom-loop-guard-required", false, "require pre_action_state_hash and state_source on every action (LOOP-004)")
	f.DurationVar(&drain, "drain-timeout", 10*time.Second, "how long SIGTERM waits for in-flight requests")
	f.Int64Var(&checkpoints.Events, "checkpoint-events", domain.DefaultCheckpointEvents, "append a signed log checkpoint after this many events")
	f.DurationVar((*time.Duration)(&checkpoints.Interval), "checkpoint-interval", domain.DefaultCheckpointInterval, "append a signed log checkpoint when this long has passed since the first uncovered event")
	f.Int64Var(&minFree, "min-free-bytes", 0, "free disk space the log and the projections (in Kafka mode: each partition store) each keep; below it writes are answered 503 QWED-SYS-003 (0: twice the memtable + 8 MiB, 72 MiB; negative: no check)")
	kafkaOpts = addKafkaFlags(f)
	z3Opts = addZ3Flags(f)
	engineOpts = addEngineFlags(f)
	rateOpts = addRateFlags(f)
	a2aOpts = addA2AFlags(f)
	executeOpts = addExecuteFlags(f)
	webhookOpts = addWebhookFlags(f)
	proxyOpts = addProxyFlags(f)
	adapterOpts = addAdapterFlags(f)
	tlsOpts = addTLSFlags(f)
	rateOpts.tls = tlsOpts
	f.BoolVar(&allowInsecureEnv, allowInsecureEnvFlag, false, "start even when the environment integrity checks fail (QWED-Agent spec v1.1 §9.7), logging each failure as an error; command line only, AGENTGATE_ALLOW_INSECURE_ENV is not read")
	markNoEnv(cmd, allowInsecureEnvFlag)
	return cmd
}

func replayCmd() *cobra.Command {
	var (
		dataDir string
		verify  bool
	)
	cmd := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild every projection from the log and compare; --verify also re-decides every command",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			unlock, err := lockDataDir(dataDir)
			if err != nil {
				return err
			}
			defer unlock()
			g, err := embedded.OpenGate(embedded.Options{DataDir: dataDir, Logger: logger(), NoAdminKey: true})
			if err != nil {
				return err
			}
			defer g.Close()
			rep, err := replay.Replay(cmd.Context(), g.Log, g.Store, verify, g.Keyring.SignerFor(g.NodeID))
			if err != nil {
				return err
			}
			rate := float64(rep.Events) / rep.Elapsed.Seconds()
			fmt.Printf("replayed %s in %s (%.0f events/s)\n", plural(rep.Events, "event"), rep.Elapsed.Round(time.Millisecond), rate)
			if rep.ProjectionDiff != "" {
				fmt.Printf("projections differ: %s\n", rep.ProjectionDiff)
			} else {
				fmt.Println("projections: identical to the live store")
			}
			if verify {
				fmt.Printf("re-decided %s: %d differ\n", plural(rep.Redecided, "command"), len(rep.Mismatches))
				for _, m := range rep.Mismatches {
					fmt.Println("  " + m)
				}
			}
			if !rep.OK() {
				return exitCode(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "./data", "data directory")
	cmd.Flags().BoolVar(&verify, "verify", false, "also re-decide every recorded command and compare decisions and attestations")
	return cmd
}

func keysCmd() *cobra.Command {
	keys := &cobra.Command{Use: "keys", Short: "Manage principal API keys and signing keys"}
	var dataDir, principal string
	create := &cobra.Command{
		Use:   "create",
		Short: "Issue an API key for a principal (the gate must not be running on DIR; use POST /principals/{id}/keys then)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			if principal == "" {
				return errors.New("--principal is required")
			}
			return offline(cmd.Context(), dataDir, func(ctx context.Context, w command.Submitter) error {
				key, id, err := command.IssueKey(ctx, w, principal)
				if err == nil {
					fmt.Printf("principal %s key %s (shown once): %s\n", principal, id, key)
				}
				return err
			})
		},
	}
	create.Flags().StringVar(&dataDir, "data", "./data", "data directory")
	create.Flags().StringVar(&principal, "principal", "", "principal ID")
	var keyID, agent string
	// need checks the flags a credential command requires.
	need := func(flags ...string) error {
		for i := 0; i+1 < len(flags); i += 2 {
			if flags[i+1] == "" {
				return fmt.Errorf("--%s is required", flags[i])
			}
		}
		return nil
	}
	revoke := &cobra.Command{
		Use:   "revoke",
		Short: "Revoke a principal API key by ID (offline; on a running gate: DELETE /principals/{id}/keys/{key_id})",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(bindEnv(cmd), need("principal", principal, "key-id", keyID)); err != nil {
				return err
			}
			return offline(cmd.Context(), dataDir, func(ctx context.Context, w command.Submitter) error {
				err := command.RevokeKey(ctx, w, principal, keyID)
				if err == nil {
					fmt.Printf("principal %s key %s revoked\n", principal, keyID)
				}
				return err
			})
		},
	}
	rotateKey := &cobra.Command{
		Use:   "rotate",
		Short: "Replace a principal API key by a new one (offline; on a running gate: POST /principals/{id}/keys/{key_id}/rotate)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(bindEnv(cmd), need("principal", principal, "key-id", keyID)); err != nil {
				return err
			}
			return offline(cmd.Context(), dataDir, func(ctx context.Context, w command.Submitter) error {
				key, id, err := command.RotateKey(ctx, w, principal, keyID)
				if err == nil {
					fmt.Printf("principal %s key %s replaces %s (shown once): %s\n", principal, id, keyID, key)
				}
				return err
			})
		},
	}
	rotateToken := &cobra.Command{
		Use:   "rotate-agent-token",
		Short: "Mint a new token for an agent; the old one stops working (offline; on a running gate: POST /agents/{id}/token/rotate)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(bindEnv(cmd), need("agent", agent)); err != nil {
				return err
			}
			return offline(cmd.Context(), dataDir, func(ctx context.Context, w command.Submitter) error {
				tok, err := command.RotateAgentToken(ctx, w, agent)
				if err == nil {
					fmt.Printf("agent %s token (shown once): %s\n", agent, tok)
				}
				return err
			})
		},
	}
	revokeToken := &cobra.Command{
		Use:   "revoke-agent-token",
		Short: "Revoke an agent's token until a new one is rotated in (offline; on a running gate: DELETE /agents/{id}/token)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := errors.Join(bindEnv(cmd), need("agent", agent)); err != nil {
				return err
			}
			return offline(cmd.Context(), dataDir, func(ctx context.Context, w command.Submitter) error {
				err := command.RevokeAgentToken(ctx, w, agent)
				if err == nil {
					fmt.Printf("agent %s token revoked\n", agent)
				}
				return err
			})
		},
	}
	for _, c := range []*cobra.Command{revoke, rotateKey} {
		c.Flags().StringVar(&dataDir, "data", "./data", "data directory")
		c.Flags().StringVar(&principal, "principal", "", "principal ID")
		c.Flags().StringVar(&keyID, "key-id", "", "the key's ID (key_…)")
	}
	for _, c := range []*cobra.Command{rotateToken, revokeToken} {
		c.Flags().StringVar(&dataDir, "data", "./data", "data directory")
		c.Flags().StringVar(&agent, "agent", "", "agent ID")
	}
	rotate := &cobra.Command{
		Use:   "rotate-signing",
		Short: "Make a new attestation signing key active (old keys stay in the JWKS); a gate running on the data dir is told to use it at once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnv(cmd); err != nil {
				return err
			}
			msg, err := rotateSigning(dataDir, logger())
			if err != nil {
				return err
			}
			fmt.Print(msg)
			return nil
		},
	}
	rotate.Flags().StringVar(&dataDir, "data", "./data", "data directory")
	keys.AddCommand(create, rotate, revoke, rotateKey, rotateToken, revokeToken)
	return keys
}

// offline runs fn against the gate of dataDir, which must not be running
// (the log is held by one process): the credential commands of `keys`.
// No admin key is read or minted.
func offline(ctx context.Context, dataDir string, fn func(context.Context, command.Submitter) error) error {
	unlock, err := lockDataDir(dataDir)
	if err != nil {
		return err
	}
	defer unlock()
	g, err := embedded.OpenGate(embedded.Options{DataDir: dataDir, Logger: logger(), NoAdminKey: true})
	if err != nil {
		return err
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- g.Worker.Run(ctx) }()
	err = fn(ctx, g.Worker)
	cancel()
	return errors.Join(err, <-done)
}

func verifyAttestationCmd() *cobra.Command {
	var jwks, payload string
	cmd := &cobra.Command{
		Use:   "verify-attestation --jwks URL|FILE|DIR|BUNDLE [--payload FILE] TOKEN",
		Short: "Verify an attestation or an A2A verdict's attestation offline against a gate's keys (JWKS URL or file, data dir, or compliance bundle)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jwks == "" {
				return errors.New("--jwks is required")
			}
			isA2A := attest.TokenType(args[0]) == attest.A2ATyp
			if payload != "" && !isA2A {
				return fmt.Errorf("--payload applies to A2A verdict attestations (typ %s) only", attest.A2ATyp)
			}
			set, err := loadJWKS(cmd.Context(), jwks)
			if err != nil {
				return err
			}
			if isA2A {
				return verifyA2AAttestation(args[0], set, payload, time.Now())
			}
			claims, err := attest.Verify(args[0], set)
			if err != nil {
				fmt.Println("INVALID:", err)
				return exitCode(1)
			}
			fmt.Println("VALID")
			return printJSON(claims)
		},
	}
	cmd.Flags().StringVar(&jwks, "jwks", "", jwksHelp)
	cmd.Flags().StringVar(&payload, "payload", "", "an A2A message's payload (a JSON file) to check against the attestation's sub: the SHA-256 of its RFC 8785 form")
	return cmd
}
