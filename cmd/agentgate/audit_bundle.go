package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentgate/agentgate/handlers/history/audit"
	"github.com/agentgate/agentgate/handlers/history/report"
)

func init() { auditBundle = verifyBundleFile }

// bundleCheckView is the --json output of audit verify --bundle.
type bundleCheckView struct {
	OK bool `json:"ok"`
	*report.BundleCheck
}

// verifyBundleFile checks a compliance export bundle offline (see
// report.VerifyBundle): against its own JWKS, or against --jwks when
// given. It prints the findings and returns exitCode(1) unless every
// check holds.
func verifyBundleFile(ctx context.Context, file, jwksFlag string, opts audit.Options, asJSON bool) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("opening bundle: %w", err)
	}
	defer f.Close()
	b, err := report.ReadBundle(f)
	if err != nil {
		fmt.Println("INVALID:", err)
		return exitCode(1)
	}
	vo := report.VerifyOptions{SkipSignatures: opts.SkipSignatures}
	if jwksFlag != "" {
		if vo.JWKS, err = loadJWKS(ctx, jwksFlag); err != nil {
			return err
		}
	}
	chk, err := report.VerifyBundle(ctx, b, vo)
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(bundleCheckView{OK: chk.OK(), BundleCheck: chk}); err != nil {
			return err
		}
	} else {
		rep := b.Report
		fmt.Printf("bundle: agent %s, %s to %s, produced at seq %d\n", rep.Agent.AgentID,
			rep.Period.From.Format(time.RFC3339), rep.Period.To.Format(time.RFC3339), rep.ProducedAt.Seq)
		fmt.Printf("tree: partition %d, %s, root %s; %s of the agent in it, %s verified\n",
			b.Partition, plural(chk.TreeSize, "event"), b.Tree.Root, plural(chk.Events, "event"), plural(chk.Attestations, "attestation"))
		if chk.Signed > 0 {
			fmt.Printf("signed through seq %d (%s after the last checkpoint)\n", chk.Signed, plural(chk.Unsigned, "event"))
		} else {
			fmt.Println("no checkpoint: only the bundle's tree head is signed")
		}
		for _, p := range chk.Problems {
			fmt.Println("MISMATCH:", p)
		}
		switch {
		case chk.OK() && opts.SkipSignatures:
			// Only the signed tree head binds the list of the agent's
			// events: unchecked, an event could be missing.
			fmt.Println("CONSISTENT, signatures not checked: nothing proves that none of the agent's events is missing")
		case chk.OK():
			fmt.Println("INTACT")
		}
	}
	if !chk.OK() {
		return exitCode(1)
	}
	return nil
}
