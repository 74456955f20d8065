package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/matcher"
	"github.com/mcpmock/mcpmock/replayer"
)

// matchFlags are replay's matcher flags. Together they make one
// matcher.Config, laid under the cassette's own "match" rules.
type matchFlags struct {
	ignore []string // --match-ignore PATH
	tools  []string // --match-tool TOOL:KIND=ARG
	config string   // --match JSON
}

func (f *matchFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.ignore, "match-ignore", nil, "ignore this gjson path of the params when matching requests (repeatable), e.g. arguments.timestamp")
	fs.StringArrayVar(&f.tools, "match-tool", nil, "a matching rule for one tool, TOOL:KIND=ARG (repeatable): ignore=PATH, subset=PATH, unordered=PATH, regex=PATH=REGEXP, type=PATH=TYPE")
	fs.StringVar(&f.config, "match", "", `a matcher configuration in the syntax of the cassette's "match" member (JSON)`)
}

// config gathers the flags into one configuration.
func (f *matchFlags) configuration() (*matcher.Config, error) {
	cfg := &matcher.Config{Ignore: f.ignore}
	for _, spec := range f.tools {
		tool, rule, err := parseToolRule(spec)
		if err != nil {
			return nil, usagef("--match-tool %q: %v", spec, err)
		}
		cfg = matcher.Merge(cfg, &matcher.Config{Tools: map[string]*matcher.Config{tool: rule}})
	}
	if f.config != "" {
		more, err := matcher.ParseConfig(json.RawMessage(f.config))
		if err != nil {
			var ce *matcher.ConfigError
			if errors.As(err, &ce) {
				return nil, usagef("--match: at byte %d: %v", ce.Offset+1, err)
			}
			return nil, usagef("--match: %v", err)
		}
		cfg = matcher.Merge(cfg, more)
	}
	if err := cfg.Check(); err != nil {
		return nil, usagef("--match-ignore or --match-tool: %v", err)
	}
	return cfg, nil
}

// apply sets the matching of opts from the flags. The cassette's own
// configuration is applied by the engine, over this.
func (f *matchFlags) apply(c *cassettes.Cassette, opts *replayer.Options) error {
	cfg, err := f.configuration()
	if err != nil || cfg.Empty() {
		return err
	}
	for tool := range cfg.Tools {
		if unknown, known := c.UnknownTool(tool); unknown && opts.Logger != nil {
			opts.Logger.Warn(fmt.Sprintf("--match-tool or --match: the rules for tool %q never apply: the cassette neither lists nor calls it (%s)", tool, known))
		}
	}
	m, err := matcher.WithConfig(opts.Matcher, cfg)
	if err != nil {
		return usagef("%v", err)
	}
	opts.Matcher = m
	return nil
}

// parseToolRule parses TOOL:KIND=ARG: ignore=PATH, subset=PATH,
// unordered=PATH, regex=PATH=REGEXP, type=PATH=TYPE. In PATH, an "=" that
// belongs to a key is escaped as "\=" (as in gjson).
func parseToolRule(spec string) (string, *matcher.Config, error) {
	tool, rule, ok := strings.Cut(spec, ":")
	if !ok || tool == "" {
		return "", nil, errors.New("want TOOL:KIND=ARG, e.g. get_weather:ignore=arguments.timestamp")
	}
	kind, arg, ok := strings.Cut(rule, "=")
	if !ok || arg == "" {
		return "", nil, errors.New("want KIND=ARG after the tool name, e.g. ignore=arguments.timestamp")
	}
	c := &matcher.Config{}
	switch kind {
	case "ignore":
		c.Ignore = []string{arg}
	case "subset":
		c.Subset = []string{arg}
	case "unordered":
		c.Unordered = []string{arg}
	case "regex", "type":
		path, value, ok := cutUnescaped(arg, '=')
		if !ok || path == "" {
			return "", nil, errors.New(kind + " wants PATH=VALUE, e.g. regex=arguments.location=^New")
		}
		if kind == "regex" {
			c.Regex = map[string]string{path: value}
		} else {
			c.Type = map[string]string{path: value}
		}
	default:
		return "", nil, errors.New("unknown rule " + kind + " (want ignore, subset, unordered, regex or type)")
	}
	if err := c.Check(); err != nil {
		return "", nil, err
	}
	return tool, c, nil
}

func cutUnescaped(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
