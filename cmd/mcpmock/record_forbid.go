package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
	"github.com/mcpmock/mcpmock/recorder"
)

// forbidFlags are record's last line of defence against a leaked secret:
// values that must never reach the cassette.
type forbidFlags struct {
	values []string
	envs   []string
}

func (f *forbidFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.values, "forbid", nil, "refuse to save the cassette if `VALUE` still appears in it after redaction (repeatable); the live log never shows it")
	fs.StringArrayVar(&f.envs, "forbid-env", nil, "refuse to save the cassette if the value of environment variable `NAME` still appears in it (repeatable; an unset or empty variable is ignored); the live log never shows it")
}

// forbidden returns the values, named without showing them.
func (f *forbidFlags) forbidden() []recorder.Forbidden {
	var out []recorder.Forbidden
	for i, v := range f.values {
		out = append(out, recorder.Forbidden{Name: "--forbid #" + strconv.Itoa(i+1), Value: v})
	}
	for _, name := range f.envs {
		if v := os.Getenv(name); v != "" {
			out = append(out, recorder.Forbidden{Name: "$" + name, Value: v})
		}
	}
	return out
}

// liveLog returns record's live log: log, hiding what the cassette's rules
// (save.Redact; the default rules too, even with --no-default-redact: a
// log is public more often than a cassette) and the forbidden values
// cover, as they are and as a JSON string writes them.
func (f *forbidFlags) liveLog(log *slog.Logger, save cassettes.SaveOptions) (*slog.Logger, error) {
	more := &cassettes.RedactRules{}
	for _, v := range f.forbidden() {
		if v.Value == "" {
			continue
		}
		more.Values = append(more.Values, v.Value)
		if q, _ := json.Marshal(v.Value); string(q[1:len(q)-1]) != v.Value {
			more.Values = append(more.Values, string(q[1:len(q)-1]))
		}
	}
	rd, err := cassettes.NewRedactor(cassettes.DefaultRedactRules().Merge(save.Redact).Merge(more))
	if err != nil {
		return nil, usagef("%v", err)
	}
	return livelog.Redacting(log, rd), nil
}
