package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { moreCommands = append(moreCommands, versionCmd) }

// commit is the commit make build names (-ldflags -X main.commit=…), for
// the builds Go does not stamp: in a git worktree or with -buildvcs=false.
var commit string

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the VCS commit and the module versions of this build (as --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), buildVersion())
			return err
		},
	}
}

// buildVersion describes this binary from its build information: the main
// module's version, the VCS commit it was built from, the Go toolchain and
// every module linked in.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "agentgate: no build information (built without module support)\n"
	}
	return versionText(info, commit, runtime.GOOS+"/"+runtime.GOARCH)
}

// versionText formats info: "agentgate VERSION", the commit (Go's VCS
// stamp: revision, time, "+modified" for a dirty tree; else linked, the
// commit make build passed; else "unknown", e.g. for go run), the
// toolchain and platform, then
// one "  path version" line per dependency in the order the build lists
// them (sorted by path), a replaced module followed by "=> replacement".
func versionText(info *debug.BuildInfo, linked, platform string) string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agentgate %s\n", info.Main.Version)
	commit := "unknown"
	if linked != "" {
		commit = linked
	}
	if rev := settings["vcs.revision"]; rev != "" {
		commit = rev
		if t := settings["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			commit += " +modified"
		}
	}
	fmt.Fprintf(&b, "commit  %s\n", commit)
	fmt.Fprintf(&b, "go      %s %s\n", info.GoVersion, platform)
	fmt.Fprintf(&b, "modules:\n")
	for _, d := range info.Deps {
		line := "  " + d.Path + " " + d.Version
		if d.Replace != nil {
			line += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
