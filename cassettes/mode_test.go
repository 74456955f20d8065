package cassettes

import "testing"

func TestDecide(t *testing.T) {
	tests := []struct {
		mode   Mode
		exists bool
		want   Plan
	}{
		{"", true, Plan{Mode: ModeReplay, Replay: true}},
		{ModeReplay, false, Plan{Mode: ModeReplay, Replay: true}},
		{ModeRecord, true, Plan{Mode: ModeRecord, Live: true, Write: true}},
		{ModeOnce, true, Plan{Mode: ModeReplay, Replay: true}},
		{ModeOnce, false, Plan{Mode: ModeRecord, Live: true, Write: true}},
		{ModeNewEpisodes, true, Plan{Mode: ModeNewEpisodes, Replay: true, Live: true, Write: true, Append: true}},
		{ModeNewEpisodes, false, Plan{Mode: ModeRecord, Live: true, Write: true}},
		{ModePassthrough, true, Plan{Mode: ModePassthrough, Live: true}},
	}
	for _, tt := range tests {
		if got := Decide(tt.mode, tt.exists); got != tt.want {
			t.Errorf("Decide(%q, exists %v) = %+v, want %+v", tt.mode, tt.exists, got, tt.want)
		}
	}
	for _, s := range []string{"REPLAY", "new-episodes", ""} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q): %v", s, err)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil {
		t.Error("ParseMode accepts an unknown mode")
	}
}
