package mcpmocktest

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
)

// Mode says whether a Server replays its cassette or records a new one.
type Mode string

// The modes. The zero Mode means "as the command line says": the
// -mcpmock.record flag or MCPMOCK_RECORD, else replay.
const (
	// ModeReplay serves the cassette and never touches the network; a
	// request that matches nothing fails the test.
	ModeReplay = Mode(cassettes.ModeReplay)
	// ModeRecord starts the upstream server (Options.Upstream), forwards
	// every session to it through the tap and writes a fresh cassette when
	// the test ends.
	ModeRecord = Mode(cassettes.ModeRecord)
	// ModeOnce records when the cassette file does not exist, else replays.
	ModeOnce = Mode(cassettes.ModeOnce)
)

// RecordEnv is the environment variable that selects a mode for every
// Server of a test run: "1" or "true" means record; a Mode name ("record",
// "once", "replay") means that mode.
const RecordEnv = "MCPMOCK_RECORD"

// The command-line flags of a test binary that imports mcpmocktest. They are
// registered in the flag package when the package is initialized, before
// testing parses the command line, as go-vcr and golden-file tests do:
//
//	go test ./... -mcpmock.record          # record every cassette again
//	go test ./... -mcpmock.mode=once       # record only missing cassettes
var (
	recordFlag = flag.Bool("mcpmock.record", false, "mcpmocktest: record fresh cassettes from the upstream servers instead of replaying")
	modeFlag   = flag.String("mcpmock.mode", "", "mcpmocktest: the mode of every server: replay, record or once")
)

// commandLineMode is the mode that the flags, then the environment, ask for;
// "" when neither does.
func commandLineMode() (Mode, error) {
	if flag.Parsed() {
		if *modeFlag != "" {
			return parseMode(*modeFlag, "-mcpmock.mode")
		}
		if *recordFlag {
			return ModeRecord, nil
		}
	}
	switch v := strings.TrimSpace(os.Getenv(RecordEnv)); strings.ToLower(v) {
	case "":
		return "", nil
	case "1", "true", "yes", "on":
		return ModeRecord, nil
	case "0", "false", "no", "off":
		return "", nil
	default:
		return parseMode(v, RecordEnv)
	}
}

func parseMode(s, source string) (Mode, error) {
	switch m := Mode(strings.ToLower(s)); m {
	case ModeReplay, ModeRecord, ModeOnce:
		return m, nil
	case "new-episodes":
		return "", fmt.Errorf("%s=%s: the new-episodes mode is not supported by mcpmocktest yet (use once or record)", source, s)
	}
	return "", fmt.Errorf("%s=%q: unknown mode (want replay, record or once)", source, s)
}

// decideMode decides whether a server records: the command line first,
// then the test's Options.Mode, then replay, through the one decision table
// of the modes (cassettes.Decide), so that once becomes record when the
// cassette does not exist. A cassette built in Go (no path) always replays.
func decideMode(cmdline, option Mode, hasPath, exists bool) Mode {
	if !hasPath {
		return ModeReplay
	}
	m := cmdline
	if m == "" {
		m = option
	}
	if cassettes.Decide(cassettes.Mode(m), exists).Write {
		return ModeRecord
	}
	return ModeReplay
}
