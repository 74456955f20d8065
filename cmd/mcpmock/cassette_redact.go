package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
)

// redactFlags are the redaction rules given on the command line, added to
// the default rules (cassettes.DefaultRedactRules) unless --no-default-redact.
type redactFlags struct {
	headers, members, paths, values, patterns []string
	noDefaults                                bool
}

func (f *redactFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.headers, "redact-header", nil, "also redact the HTTP header or URL query parameter `NAME` (repeatable)")
	fs.StringArrayVar(&f.members, "redact-member", nil, "also redact the string value of every JSON member `NAME` (repeatable; any case, - and _ ignored)")
	fs.StringArrayVar(&f.paths, "redact-path", nil, "also redact the value at the gjson `PATH` of each message, e.g. params.arguments.token (repeatable)")
	fs.StringArrayVar(&f.values, "redact-value", nil, "also redact the literal `TEXT` wherever it occurs (repeatable)")
	fs.StringArrayVar(&f.patterns, "redact-regex", nil, "also redact the text matching `REGEXP` (its first group, if it has one; repeatable)")
	fs.BoolVar(&f.noDefaults, "no-default-redact", false, "apply only the rules given by flags, not the default ones")
}

// rules returns the rules, checked.
func (f *redactFlags) rules() (*cassettes.RedactRules, error) {
	more := &cassettes.RedactRules{Headers: f.headers, Members: f.members, Paths: f.paths, Values: f.values, Patterns: f.patterns}
	rules := more
	if !f.noDefaults {
		rules = cassettes.DefaultRedactRules().Merge(more)
	}
	if err := rules.Check(); err != nil {
		return nil, usagef("%v", err)
	}
	return rules, nil
}

// cassetteRedact is "mcpmock cassette redact": apply redaction rules to a
// cassette in place (atomically), without recording again.
func (e *env) cassetteRedact(args []string) error {
	var path string
	var dryRun bool
	var rf redactFlags
	fs := newFlagSet("cassette redact", "mcpmock cassette redact -c CASSETTE [rule flags]", e.stdout)
	fs.StringVarP(&path, "cassette", "c", "", "cassette file (required)")
	fs.BoolVar(&dryRun, "dry-run", false, "list the secrets found, change nothing")
	rf.register(fs)
	if help, err := parse(fs, args); help || err != nil {
		return err
	}
	if path == "" && fs.NArg() == 1 {
		path = fs.Arg(0)
	} else if path == "" || fs.NArg() > 0 {
		return usagef("cassette redact needs one cassette: -c CASSETTE")
	}
	rules, err := rf.rules()
	if err != nil {
		return err
	}
	c, err := cassettes.Load(path)
	if err != nil {
		return err
	}
	found := c.Secrets(rules)
	for _, s := range found {
		where := "meta"
		if s.Interaction >= 0 {
			where = fmt.Sprintf("interaction %d", s.Interaction+1)
		}
		fmt.Fprintf(e.stdout, "%s: %s: %s (%s)\n", path, where, s.Where, s.Rule)
	}
	if dryRun || len(found) == 0 {
		fmt.Fprintf(e.stdout, "%s: %d secrets found%s\n", path, len(found), map[bool]string{true: ", nothing changed", false: ""}[dryRun])
		return nil
	}
	n := c.Redact(rules)
	if err := cassettes.Save(path, c); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: redacted %d values\n", path, n)
	return nil
}
