// Package rate is the one form of a rate that mcpmock's flags take, N per
// DURATION: the listener's --rate-limit, the guard's --tool-rate-limit and
// the @N/DURATION of a --fault selector.
package rate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is N events per Per. The zero Rate is no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// String writes the rate as Parse reads it ("100/1s"), "" for none.
func (r Rate) String() string {
	if r.N <= 0 || r.Per <= 0 {
		return ""
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// Parse reads "N/DURATION": "100/1s", "600/1m", or with a bare unit "10/s",
// "300/m", "1000/h" (one of the unit). "" is no limit.
func Parse(s string) (Rate, error) {
	if s == "" {
		return Rate{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || count <= 0 {
		return Rate{}, fmt.Errorf("rate %q: %q is not a positive number; want N/DURATION, such as 100/1s or 600/m", s, strings.TrimSpace(n))
	}
	per = strings.TrimSpace(per)
	if per != "" && !strings.ContainsAny(per[:1], "0123456789") {
		per = "1" + per
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return Rate{}, fmt.Errorf("rate %q: %q is not a positive duration (such as 1s, 30s, 1m or m); want N/DURATION, such as 100/1s or 600/m", s, per)
	}
	return Rate{N: count, Per: d}, nil
}
