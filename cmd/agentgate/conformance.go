package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/handlers/conformance"
	"github.com/spf13/cobra"
)

func init() { moreCommands = append(moreCommands, conformanceCmd) }

func conformanceCmd() *cobra.Command {
	var (
		url, apiKey, level string
		timeout            time.Duration
		asJSON             bool
	)
	c := &cobra.Command{
		Use:   "conformance",
		Short: "Run the QWED protocol v1.0 conformance vectors against a server and print the level reached",
		Long: "Sends the QWED protocol v1.0 vectors (request/response format, the 8 engines, the error codes,\n" +
			"the QWED-Logic DSL, attestation, batch) to the server at --url over HTTP, prints PASS, FAIL (with\n" +
			"the reason) or SKIP per vector and the §11.1 level reached (basic, standard, full). Exits 0 when\n" +
			"--level is reached, 1 otherwise. The authentication vectors run only with --api-key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			want, err := conformance.ParseLevel(level)
			if err != nil {
				return err
			}
			rep, err := conformance.Run(cmd.Context(), conformance.Config{URL: url, APIKey: apiKey, Timeout: timeout})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return fmt.Errorf("writing the report: %w", err)
				}
			} else if err := rep.WriteText(out); err != nil {
				return err
			}
			if !rep.Reaches(want) {
				return exitCode(1)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&url, "url", "", "base URL of the QWED server (http:// or https://), e.g. http://127.0.0.1:8080")
	f.StringVar(&apiKey, "api-key", "", "API key sent as X-API-Key; enables the authentication vectors")
	f.StringVar(&level, "level", "full", "level that must be reached for exit status 0: basic, standard or full")
	f.DurationVar(&timeout, "timeout", conformance.DefaultTimeout, "bound on each request")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	_ = c.MarkFlagRequired("url")
	return c
}
