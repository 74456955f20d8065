package main

import (
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/recorder"
)

// forbidFlags are record's last line of defence against a leaked secret:
// values that must never reach the cassette.
type forbidFlags struct {
	values []string
	envs   []string
}

func (f *forbidFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.values, "forbid", nil, "refuse to save the cassette if `VALUE` still appears in it after redaction (repeatable)")
	fs.StringArrayVar(&f.envs, "forbid-env", nil, "refuse to save the cassette if the value of environment variable `NAME` still appears in it (repeatable; an unset or empty variable is ignored)")
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
