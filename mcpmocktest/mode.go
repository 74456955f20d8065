package mcpmocktest

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
)

// Mode says what a Server does with its cassette and the live server: the
// modes of cassettes.Decide, the one decision table of the modes, under
// one name.
type Mode = cassettes.Mode

// The modes. The zero Mode means "as the command line says": the
// -mcpmock.record flag or MCPMOCK_RECORD, else replay.
const (
	// ModeReplay serves the cassette and never touches the network; a
	// request that matches nothing fails the test.
	ModeReplay = cassettes.ModeReplay
	// ModeRecord forwards every session to the live server
	// (Options.Upstream or Options.UpstreamURL) through the tap and writes
	// a fresh cassette when the test ends.
	ModeRecord = cassettes.ModeRecord
	// ModeOnce records when the cassette file does not exist, else replays.
	ModeOnce = cassettes.ModeOnce
	// ModeNewEpisodes replays what the cassette answers and forwards a
	// request that matches nothing to the live server, answers it from
	// there, and appends the new interaction to the cassette when the test
	// ends. Without a cassette it records one.
	ModeNewEpisodes = cassettes.ModeNewEpisodes
	// ModePassthrough forwards every session to the live server, as
	// ModeRecord does, and writes nothing: the journal and the live log
	// only.
	ModePassthrough = cassettes.ModePassthrough
)

// RecordEnv is the environment variable that selects a mode for every
// Server of a test run: "1" or "true" means record; a Mode name ("record",
// "once", "new-episodes", "passthrough", "replay") means that mode.
const RecordEnv = "MCPMOCK_RECORD"

// The command-line flags of a test binary that imports mcpmocktest. They are
// registered in the flag package when the package is initialized, before
// testing parses the command line, as go-vcr and golden-file tests do.
// Only the test binaries of packages that import mcpmocktest know them, so
// across ./... set RecordEnv instead:
//
//	go test ./pkg -mcpmock.record            # record every cassette again
//	go test ./pkg -mcpmock.mode=once         # record only missing cassettes
//	MCPMOCK_RECORD=new-episodes go test ./...  # add what the cassettes miss
var (
	recordFlag = flag.Bool("mcpmock.record", false, "mcpmocktest: record fresh cassettes from the upstream servers instead of replaying")
	modeFlag   = flag.String("mcpmock.mode", "", "mcpmocktest: the mode of every server: replay, record, once, new-episodes or passthrough")
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
	m, err := cassettes.ParseMode(s)
	if err != nil {
		return "", fmt.Errorf("%s: %w", source, err)
	}
	return Mode(m), nil
}

// decideMode decides what a server does: the command line first, then the
// test's Options.Mode, then replay, through the one decision table of the
// modes (cassettes.Decide), so that once becomes record or replay, and
// new-episodes record when the cassette does not exist. It returns
// ModeReplay, ModeRecord, ModeNewEpisodes or ModePassthrough. A cassette
// built in Go (no path) always replays.
func decideMode(cmdline, option Mode, hasPath, exists bool) Mode {
	if !hasPath {
		return ModeReplay
	}
	m := cmdline
	if m == "" {
		m = option
	}
	return Mode(cassettes.Decide(cassettes.Mode(m), exists).Mode)
}

// forwards reports whether every session of a server in mode m goes to the
// live server through the tap: record and passthrough.
func forwards(m Mode) bool { return m == ModeRecord || m == ModePassthrough }
