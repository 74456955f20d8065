package replayer

import (
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// What a miss and a reply mismatch show of the two messages compared (the
// differences, the diff, the replies) goes to stderr, into `mcpmock run`'s
// report, to OnMiss and OnReplyMismatch (mcpmocktest's test failures) and
// into the error the client gets. It is redacted first by the default rules
// (cassettes.DefaultRedactor), as the live log and the cassette are: the
// credentials that a test sends, or that a cassette saved without the
// default rules holds, are not shown. Matching reads the messages as they
// are; only what is shown is redacted.

// shownComparison is a comparison as it is shown.
type shownComparison struct {
	rec, live json.RawMessage      // the params compared, redacted
	diffs     []matcher.Difference // each difference, its values redacted
	diff      string               // the diff of the redacted params
}

// shown returns res, the comparison by m of rec and live, as it is shown.
// Each difference keeps its path, so that a secret that differs is still
// listed, with its values read from the redacted params; the diff is that
// of the redacted requests, in which secrets that differ look alike.
func shown(m matcher.Matcher, rec, live matcher.Request, res matcher.Result) shownComparison {
	rd := cassettes.DefaultRedactor()
	recShown, nr := rd.RedactJSON(rec.Params)
	liveShown, nl := rd.RedactJSON(live.Params)
	s := shownComparison{rec: recShown, live: liveShown, diffs: res.Differences, diff: res.Diff}
	if nr+nl == 0 {
		return s
	}
	s.diffs = make([]matcher.Difference, len(res.Differences))
	for i, d := range res.Differences {
		if d.Path != "" {
			d.Recorded = shownValue(recShown, d.Path, d.Recorded)
			d.Live = shownValue(liveShown, d.Path, d.Live)
		}
		s.diffs[i] = d
	}
	if !res.Match {
		s.diff = m.Match(matcher.Request{Method: rec.Method, Params: recShown}, matcher.Request{Method: live.Method, Params: liveShown}).Diff
	}
	return s
}

// shownValue returns the value at path in redacted params as compact JSON,
// for a difference whose value there was was ("" for none): Redacted, as a
// JSON string, where the redaction replaced a member above it whole.
func shownValue(params json.RawMessage, path, was string) string {
	if was == "" {
		return ""
	}
	v := gjson.GetBytes(params, path)
	if !v.Exists() {
		return `"` + cassettes.Redacted + `"`
	}
	out, ok := jsonrpc.AppendCompactDocument(nil, []byte(v.Raw))
	if !ok {
		return `"` + cassettes.Redacted + `"`
	}
	return string(out)
}
