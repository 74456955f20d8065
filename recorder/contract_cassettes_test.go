package recorder

import (
	"log/slog"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// TestContractCleanOnRealRecordings: the recordings of the official
// TypeScript SDK client driving server-everything (cmd/mcpmock's
// testdata/everything, issue 19), played through the checks in the order
// their messages passed, the client's with the HTTP headers they carried,
// give no warning: real, conforming traffic must not be flagged.
func TestContractCleanOnRealRecordings(t *testing.T) {
	for _, name := range []string{"stdio.json", "http.json"} {
		t.Run(name, func(t *testing.T) {
			c, err := cassettes.Load("../cmd/mcpmock/testdata/everything/" + name)
			if err != nil {
				t.Fatal(err)
			}
			type msg struct {
				from cassettes.Direction
				at   cassettes.Millis
				data []byte
				hdr  map[string]string
			}
			var all []msg
			for _, in := range c.Interactions {
				var hdr map[string]string
				if in.HTTP != nil {
					hdr = in.HTTP.RequestHeaders
				}
				switch {
				case in.Request != nil:
					all = append(all, msg{in.From, in.AtMs, in.Request, hdr})
				case in.Notification != nil:
					all = append(all, msg{in.From, in.AtMs, in.Notification, hdr})
				}
				for _, m := range in.Exchange {
					if m.Message != nil {
						all = append(all, msg{m.From, m.AtMs, m.Message, nil})
					}
				}
				if in.Response != nil && in.Response.Message != nil {
					all = append(all, msg{in.Response.From, in.Response.AtMs, in.Response.Message, nil})
				}
			}
			sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
			v := &viewer{}
			rec, err := New("", &Options{Logger: slog.New(v)})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			for _, m := range all {
				if m.from == cassettes.FromClient && m.hdr != nil {
					h := http.Header{}
					for k, v := range m.hdr {
						h.Set(k, v)
					}
					rec.observeHeader(m.data, now, h)
					continue
				}
				rec.Observe(m.from, m.data, now)
			}
			ws, n := rec.ContractWarnings()
			rec.Close()
			if n != 0 || len(all) < 100 {
				t.Errorf("%d messages, %d warnings: %+v", len(all), n, ws)
			}
		})
	}
}
