package cassettes

import (
	"fmt"
	"strings"
)

// Mode is what a run does with its cassette and the live server, as in the
// VCR family of tools. The zero Mode is ModeReplay.
type Mode string

// The modes.
const (
	// ModeReplay serves the cassette only; a request that matches nothing
	// is a miss. It never touches the network.
	ModeReplay Mode = "replay"
	// ModeRecord forwards everything to the live server and writes a new
	// cassette over the old one.
	ModeRecord Mode = "record"
	// ModeOnce replays when the cassette exists, else records it.
	ModeOnce Mode = "once"
	// ModeNewEpisodes replays what matches and forwards a miss to the live
	// server, appending the new interaction to the cassette. Without a
	// cassette it records one.
	ModeNewEpisodes Mode = "new-episodes"
	// ModePassthrough forwards everything to the live server and writes
	// nothing: the live log only.
	ModePassthrough Mode = "passthrough"
)

// modes lists every mode.
var modes = []Mode{ModeReplay, ModeRecord, ModeOnce, ModeNewEpisodes, ModePassthrough}

// ParseMode parses a mode name (any case); "" is ModeReplay.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if m == "" {
		return ModeReplay, nil
	}
	for _, k := range modes {
		if m == k {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want replay, record, once, new-episodes or passthrough)", s)
}

// Plan is what a run does, as Decide decides it.
type Plan struct {
	// Mode is the mode as decided (once becomes replay or record).
	Mode Mode
	// Replay serves from the cassette, which must exist.
	Replay bool
	// Live needs the live server (a command or an upstream URL).
	Live bool
	// Write writes the cassette: a new one (Append false) or the old one
	// with the new interactions appended (Append true).
	Write  bool
	Append bool
}

// Decide is the one decision table of the modes: what a run in mode m does,
// given whether the cassette file exists.
//
//	mode          cassette exists        cassette missing
//	replay        replay                 replay (fails: no cassette)
//	record        record (overwrite)     record
//	once          replay                 record
//	new-episodes  replay, forward misses record
//	              and append them
//	passthrough   forward, write nothing forward, write nothing
func Decide(m Mode, exists bool) Plan {
	switch m {
	case ModeRecord:
		return Plan{Mode: ModeRecord, Live: true, Write: true}
	case ModeOnce:
		if exists {
			return Plan{Mode: ModeReplay, Replay: true}
		}
		return Plan{Mode: ModeRecord, Live: true, Write: true}
	case ModeNewEpisodes:
		if exists {
			return Plan{Mode: ModeNewEpisodes, Replay: true, Live: true, Write: true, Append: true}
		}
		return Plan{Mode: ModeRecord, Live: true, Write: true}
	case ModePassthrough:
		return Plan{Mode: ModePassthrough, Live: true}
	}
	return Plan{Mode: ModeReplay, Replay: true}
}
