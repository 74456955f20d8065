package main

import (
	"encoding/json"
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
)

// cassetteDiff is "mcpmock cassette diff [--json] [--breaking] A B": what
// changed from cassette A to cassette B (cassettes.Diff), one line per
// change, or the JSON report of docs/diff.md. It exits as diff(1) does: 0
// when nothing changed, 1 when anything did (with --breaking, only when a
// change breaks a client), 2 for trouble.
func (e *env) cassetteDiff(args []string) error {
	var asJSON, breakingOnly bool
	fs := newFlagSet("cassette diff", "mcpmock cassette diff [--json] [--breaking] A B", e.stdout)
	fs.BoolVar(&asJSON, "json", false, "print the changes as one JSON object (docs/diff.md)")
	fs.BoolVar(&breakingOnly, "breaking", false, "exit 1 only for a change that breaks a client (all changes are still printed)")
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("cassette diff needs two cassettes: A (the old) and B (the new)")
	}
	oldPath, newPath := fs.Arg(0), fs.Arg(1)
	var cs [2]*cassettes.Cassette
	for i, path := range []string{oldPath, newPath} {
		c, err := cassettes.Load(path)
		if err != nil {
			// Trouble is status 2, as for diff(1): the error names the
			// file and, for a file that does not parse, its line and
			// column.
			fmt.Fprintf(e.stderr, "mcpmock: %v\n", err)
			return exitStatus(2)
		}
		cs[i] = c
	}
	changes := cassettes.Diff(cs[0], cs[1])
	if changes == nil {
		changes = cassettes.Changes{}
	}
	breaking := changes.Breaking()
	if asJSON {
		out, err := json.MarshalIndent(diffReport{
			Version: diffReportVersion, Old: oldPath, New: newPath,
			Summary: diffSummary{Changes: len(changes), Breaking: breaking},
			Changes: changes,
		}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else {
		for _, c := range changes {
			fmt.Fprintln(e.stdout, c)
		}
		if len(changes) > 0 {
			fmt.Fprintf(e.stdout, "%s -> %s: %d change%s, %d breaking\n", oldPath, newPath, len(changes), plural(len(changes)), breaking)
		}
	}
	if breaking > 0 || len(changes) > 0 && !breakingOnly {
		return exitStatus(1)
	}
	return nil
}

// diffReportVersion is the version of the JSON shape of cassette diff
// --json; it changes only when a member changes meaning or goes away.
const diffReportVersion = 1

// diffReport is what cassette diff --json prints (docs/diff.md).
type diffReport struct {
	Version int               `json:"version"`
	Old     string            `json:"old"`
	New     string            `json:"new"`
	Summary diffSummary       `json:"summary"`
	Changes cassettes.Changes `json:"changes"`
}

type diffSummary struct {
	Changes  int `json:"changes"`
	Breaking int `json:"breaking"`
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
