package mcpmocktest

import "testing"

func TestDecideMode(t *testing.T) {
	tests := []struct {
		cmdline, option Mode
		hasPath, exists bool
		want            Mode
	}{
		{"", "", true, true, ModeReplay},
		{"", "", true, false, ModeReplay}, // a missing cassette fails in replay
		{ModeRecord, "", true, true, ModeRecord},
		{"", ModeRecord, true, true, ModeRecord},
		{ModeReplay, ModeRecord, true, true, ModeReplay}, // the command line wins
		{"", ModeOnce, true, true, ModeReplay},
		{"", ModeOnce, true, false, ModeRecord},
		{ModeOnce, ModeReplay, true, false, ModeRecord},
		{ModeRecord, ModeRecord, false, false, ModeReplay}, // a cassette built in Go
		{"", ModeNewEpisodes, true, true, ModeNewEpisodes},
		{"", ModeNewEpisodes, true, false, ModeRecord},
		{ModeNewEpisodes, ModeReplay, true, true, ModeNewEpisodes},
		{ModePassthrough, ModeReplay, true, true, ModePassthrough},
		{"", ModePassthrough, true, false, ModePassthrough},
	}
	for _, tt := range tests {
		if got := decideMode(tt.cmdline, tt.option, tt.hasPath, tt.exists); got != tt.want {
			t.Errorf("decideMode(%q, %q, path %v, exists %v) = %q, want %q", tt.cmdline, tt.option, tt.hasPath, tt.exists, got, tt.want)
		}
	}
}

func TestCommandLineMode(t *testing.T) {
	for env, want := range map[string]Mode{"": "", "1": ModeRecord, "true": ModeRecord, "0": "", "once": ModeOnce, "REPLAY": ModeReplay,
		"new-episodes": ModeNewEpisodes, "passthrough": ModePassthrough} {
		t.Setenv(RecordEnv, env)
		got, err := commandLineMode()
		if err != nil || got != want {
			t.Errorf("%s=%q: got %q, %v; want %q", RecordEnv, env, got, err, want)
		}
	}
	for _, env := range []string{"sometimes", "new_episodes"} {
		t.Setenv(RecordEnv, env)
		if _, err := commandLineMode(); err == nil {
			t.Errorf("%s=%q: no error", RecordEnv, env)
		}
	}
}
