package main

import (
	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/recorder"
)

// recordSaveFlags say how record prepares the cassette for its file: the
// redaction rules (--redact-*, --no-default-redact, as in cassette redact
// and replay --mode record) and --keep-timing.
type recordSaveFlags struct {
	keepTiming bool
	redact     redactFlags
}

func (f *recordSaveFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.keepTiming, "keep-timing", false, "keep the time offsets (atMs) instead of writing 0 (needed for replay --latency recorded)")
	f.redact.register(fs)
}

// apply sets the recorder's save options; a bad rule (an invalid regular
// expression or path) is a usage error.
func (f *recordSaveFlags) apply(o *recorder.Options) error {
	rules, err := f.redact.rules()
	if err != nil {
		return err
	}
	o.Save = cassettes.SaveOptions{Redact: rules, NoDefaultRedact: true, KeepTiming: f.keepTiming}
	return nil
}
