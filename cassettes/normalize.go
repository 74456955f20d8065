package cassettes

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// ServerInfo names the server that a cassette was recorded from.
type ServerInfo struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

// SaveOptions say how a recorded cassette is prepared for its file. The
// zero value is the default: the default redaction rules, and volatile
// values normalised.
type SaveOptions struct {
	// Redact are more redaction rules, added to DefaultRedactRules.
	Redact *RedactRules
	// NoDefaultRedact leaves the default rules out (only Redact applies).
	NoDefaultRedact bool
	// KeepTiming keeps the time offsets ("atMs") as recorded. By default
	// they are written as 0: they change on every run and carry no meaning
	// for replay unless it replays recorded latency (--latency recorded).
	KeepTiming bool
}

// Finisher prepares recorded cassettes for saving: it redacts secrets,
// normalises what changes from run to run without meaning, and fills in
// Meta.ServerInfo, so that recording the same session twice gives the same
// file byte for byte. It remembers the messages it has redacted, so a
// recorder may finish a growing cassette again and again at little cost.
// It is not safe for concurrent use.
type Finisher struct {
	rd   *Redactor
	opts SaveOptions
}

// NewFinisher returns a Finisher; nil options are the default.
func NewFinisher(opts *SaveOptions) (*Finisher, error) {
	f := &Finisher{}
	if opts != nil {
		f.opts = *opts
	}
	rules := f.opts.Redact
	if !f.opts.NoDefaultRedact {
		rules = DefaultRedactRules().Merge(rules)
	}
	rd, err := NewRedactor(rules)
	if err != nil {
		return nil, err
	}
	f.rd = rd
	return f, nil
}

// Finish prepares c in place (c may share messages with another cassette:
// they are replaced, not changed) and returns the number of secrets it
// redacted.
func (f *Finisher) Finish(c *Cassette) int {
	n := f.rd.Redact(c)
	if !f.opts.KeepTiming {
		c.Normalize()
	}
	c.Meta.RecordedAt = day(c.Meta.RecordedAt)
	if c.Meta.ServerInfo == nil {
		c.Meta.ServerInfo = findServerInfo(c)
	}
	return n
}

// FinishInteraction prepares one interaction of a recording as Finish does
// (in place; its messages are replaced, not changed) and returns the number
// of secrets it redacted. Unlike Finish it remembers nothing, so a recorder
// that finishes each interaction once holds no memory for it afterwards.
func (f *Finisher) FinishInteraction(in *Interaction) int {
	n := f.rd.RedactInteraction(in)
	if !f.opts.KeepTiming {
		in.zeroTiming()
	}
	return n
}

// FinishHead prepares what Finish prepares outside the interactions: the
// server's command line (redacted) and the date of the recording. It does
// not fill in Meta.ServerInfo (see ServerInfoOf).
func (f *Finisher) FinishHead(c *Cassette) int {
	n := f.rd.redactMeta(c)
	c.Meta.RecordedAt = day(c.Meta.RecordedAt)
	return n
}

// Normalize writes every time offset of c as 0 (see SaveOptions.KeepTiming).
func (c *Cassette) Normalize() {
	for i := range c.Interactions {
		c.Interactions[i].zeroTiming()
	}
}

// zeroTiming writes the interaction's time offsets as 0.
func (in *Interaction) zeroTiming() {
	in.AtMs = 0
	if len(in.Exchange) > 0 {
		zero := true
		for _, m := range in.Exchange {
			zero = zero && m.AtMs == 0
		}
		if !zero {
			ex := make([]Message, len(in.Exchange))
			copy(ex, in.Exchange)
			for j := range ex {
				ex[j].AtMs = 0
			}
			in.Exchange = ex
		}
	}
	if in.Response != nil && in.Response.AtMs != 0 {
		r := *in.Response
		r.AtMs = 0
		in.Response = &r
	}
}

// day keeps the date of an RFC 3339 time, at midnight UTC: the age of a
// cassette is counted in days, and a recording made again the same day
// leaves the line unchanged.
func day(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.UTC().Truncate(24 * time.Hour).Format(time.RFC3339)
}

// findServerInfo returns the server's name and version from the first
// recorded answer to initialize (result.serverInfo) or server/discover
// (result._meta["io.modelcontextprotocol/serverInfo"]); nil when none.
func findServerInfo(c *Cassette) *ServerInfo {
	for i := range c.Interactions {
		if si := ServerInfoOf(&c.Interactions[i]); si != nil {
			return si
		}
	}
	return nil
}

// ServerInfoOf returns the server's name and version from one interaction,
// an answered initialize or server/discover; nil for any other.
func ServerInfoOf(in *Interaction) *ServerInfo {
	if in.Request == nil || in.From != FromClient || in.Response == nil || in.Response.Message == nil {
		return nil
	}
	method := gjson.GetBytes(in.Request, "method").String()
	if !mcp.Handshake(method) {
		return nil
	}
	res := gjson.GetBytes(in.Response.Message, "result")
	info := res.Get("serverInfo")
	if !info.Exists() {
		info = res.Get(`_meta.io\.modelcontextprotocol/serverInfo`)
	}
	if !info.IsObject() {
		return nil
	}
	var si ServerInfo
	if json.Unmarshal([]byte(info.Raw), &si) == nil && (si.Name != "" || si.Version != "") {
		return &si
	}
	return nil
}

// RecordedTime returns Meta.RecordedAt as a time; ok is false when it is
// missing or not RFC 3339.
func (c *Cassette) RecordedTime() (t time.Time, ok bool) {
	t, err := time.Parse(time.RFC3339, c.Meta.RecordedAt)
	return t, err == nil
}

// Age is how old a recording is. A file written for stability keeps only
// the day of its recording (midnight UTC), so its age is known to a day:
// Min is the age counted from the end of that day, Max from its start. A
// recordedAt with a time of day gives Min == Max.
type Age struct{ Min, Max time.Duration }

// AgeAt returns the recording's age at now; ok is false when recordedAt is
// missing or not RFC 3339.
func (c *Cassette) AgeAt(now time.Time) (a Age, ok bool) {
	t, ok := c.RecordedTime()
	if !ok {
		return Age{}, false
	}
	a = Age{Min: now.Sub(t), Max: now.Sub(t)}
	if u := t.UTC(); u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
		a.Min = now.Sub(t.Add(24 * time.Hour))
	}
	return a, true
}

// Exceeds reports whether the recording is older than max for certain:
// even counted from the end of its day. A cassette recorded this morning
// is not older than an hour.
func (a Age) Exceeds(max time.Duration) bool { return a.Min > max }

// String says the age in hours: "1440h", or "1416h to 1440h" for a day.
func (a Age) String() string {
	hours := func(d time.Duration) string {
		return strconv.FormatInt(int64(max(d, 0).Round(time.Hour)/time.Hour), 10) + "h"
	}
	if a.Min == a.Max {
		return hours(a.Max)
	}
	return hours(a.Min) + " to " + hours(a.Max)
}
