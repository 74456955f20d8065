// Package ratelimit shows a client that survives the rate-limit tool error
// of the MCP tools specification, tested against a recording with an
// overlay (ratelimit.json) that makes the third get_weather call fail:
//
//	mcpmock replay -c testdata/weather.json --overlay ratelimit.json
package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Retrier calls get_weather and retries a rate-limited call with
// exponential backoff.
type Retrier struct {
	Session *mcp.ClientSession
	// Attempts is the most calls per location; 0 means 4.
	Attempts int
	// Backoff is the wait before the first retry, doubled each time; 0
	// means 100ms.
	Backoff time.Duration
	// Sleep waits; nil means a timer honouring ctx. Tests make it instant.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Weather returns the weather text for a location and how many calls it
// took. A tool error other than the rate limit is returned as an error at
// once.
func (r *Retrier) Weather(ctx context.Context, location string) (string, int, error) {
	attempts, backoff := r.Attempts, r.Backoff
	if attempts == 0 {
		attempts = 4
	}
	if backoff == 0 {
		backoff = 100 * time.Millisecond
	}
	sleep := r.Sleep
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	for n := 1; ; n++ {
		res, err := r.Session.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"location": location}})
		if err != nil {
			return "", n, err
		}
		text := ""
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				text = t.Text
			}
		}
		if !res.IsError {
			return text, n, nil
		}
		if !strings.Contains(text, "rate limit") || n == attempts {
			return "", n, fmt.Errorf("get_weather(%s): %s", location, text)
		}
		if err := sleep(ctx, backoff); err != nil {
			return "", n, err
		}
		backoff *= 2
	}
}
