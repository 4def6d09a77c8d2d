package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's command table from the commands")

// Markers of the generated command table in README.md.
const (
	tableBegin = "<!-- commands: generated from the commands' flags by `go generate ./cmd/agentgate`; do not edit -->"
	tableEnd   = "<!-- end of commands -->"
)

// commandTable renders the README's command table from the commands: one
// row per runnable, visible command with its one-liner and every flag
// (with its default when it has one), so that the table cannot miss a flag.
func commandTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | what it does | flags (default) |\n| --- | --- | --- |\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if c.Runnable() && c != root {
			var flags []string
			c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
				if f.Hidden || f.Name == "help" {
					return
				}
				s := "`--" + f.Name + "`"
				if d := f.DefValue; d != "" && d != "false" && d != "[]" && d != "0" && d != "0s" {
					s += " (" + d + ")"
				}
				flags = append(flags, s)
			})
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.CommandPath(), escapeCell(c.Short), escapeCell(strings.Join(flags, ", ")))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.String()
}

// escapeCell escapes the pipes of a Markdown table cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Issue 17 item 8: README.md's command table is the commands' own (their
// one-liners and every flag); it missed --drain-timeout, --kafka-wait,
// --max-rows, --kafka-timeout and dev-kafka's --partitions and
// --sync-writes. `go generate ./cmd/agentgate` rewrites it.
func TestReadmeCommandTable(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, tableBegin), strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no command table between %q and %q", tableBegin, tableEnd)
	}
	want := commandTable(newRoot())
	got := readme[i+len(tableBegin)+1 : j]
	if got == want {
		return
	}
	if *updateReadme {
		if err := os.WriteFile("../../README.md", []byte(readme[:i+len(tableBegin)+1]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's command table differs from the commands; run go generate ./cmd/agentgate\ngot:\n%s\nwant:\n%s", got, want)
}
