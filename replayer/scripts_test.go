package replayer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestScriptsFired: Engine.Scripts lists every scripted interaction in the
// order tried, where it comes from and how often it fired over all
// sessions; one for a tool that is never called never fires.
func TestScriptsFired(t *testing.T) {
	first := overlay(t, `{"version": 1, "interactions": [
	  {"request": {"method": "tools/call", "params": {"name": "get_weather"}}, "when": {"every": 2},
	   "response": {"message": {"result": {"isError": true, "content": [{"type": "text", "text": "rate limited"}]}}}},
	  {"request": {"method": "tools/call", "params": {"name": "get_wether"}}, "fault": {"close": true}}]}`)
	second := overlay(t, `{"version": 1, "interactions": [
	  {"request": {"method": "ping"}, "fault": {"delayMs": 1}}]}`)
	w, e := serveCassette(t, cassette(call(1, "get_weather", `{"location":"NYC"}`, text("sunny"))), &Options{Overlays: []*cassettes.Cassette{first, second}})
	for i := range 5 {
		w.send(callLine(i, "get_weather", `{"location":"NYC"}`))
		w.recv()
	}
	want := []Script{
		{Overlay: 1, Interaction: 1, Method: "tools/call", Tool: "get_weather", Fired: 2},
		{Overlay: 1, Interaction: 2, Method: "tools/call", Tool: "get_wether", Fired: 0},
		{Overlay: 2, Interaction: 1, Method: "ping", Fired: 0},
	}
	if diff := cmp.Diff(want, e.Scripts()); diff != "" {
		t.Errorf("Scripts (-want +got):\n%s", diff)
	}
	if s := e.Stats(); s.Sessions != 1 {
		t.Errorf("Stats().Sessions = %d, want 1", s.Sessions)
	}
}
