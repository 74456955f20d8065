package closest

import "testing"

func TestName(t *testing.T) {
	known := []string{"cassette", "upstream", "get_weather", "get_forecast"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"casette", "cassette", true},
		{"CASSETTE", "cassette", true},
		{"get_wether", "get_weather", true},
		{"get_forcast", "get_forecast", true},
		{"upstrem", "upstream", true},
		{"listen", "", false},
		{"", "", false},
	} {
		got, ok := Name(tc.name, known)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Name(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
