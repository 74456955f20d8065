package rate

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Rate{
		"":         {},
		"100/1s":   {100, time.Second},
		"10/s":     {10, time.Second},
		"600/m":    {600, time.Minute},
		"5/250ms":  {5, 250 * time.Millisecond},
		"1000/h":   {1000, time.Hour},
		" 3 / 2s ": {3, 2 * time.Second},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && in == want.String() {
			continue
		}
		if back, err := Parse(want.String()); err != nil || back != want {
			t.Errorf("Parse(%q.String()) = %v, %v", in, back, err)
		}
	}
	for _, bad := range []string{"100", "0/s", "-1/s", "x/s", "10/", "10/0s", "10/xyz"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
