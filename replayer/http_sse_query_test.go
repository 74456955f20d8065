package replayer

import (
	"net/url"
	"testing"
)

// TestQueryValue holds queryValue to url.Values.Get: the first value of
// the key, unescaped, skipping what ParseQuery skips.
func TestQueryValue(t *testing.T) {
	for _, raw := range []string{
		"", "sessionId=abc", "sessionId=a%2Fb+c", "x=1&sessionId=two&sessionId=three", "sessionId", "sessionId=",
		"session%49d=escaped", "sessionId=%zz&sessionId=ok", "sessionId=a;b&sessionId=c", "a=1;sessionId=x",
		"sessionId=first&&sessionId=second", "=v&sessionId=v2", "sessionid=lower",
	} {
		v, _ := url.ParseQuery(raw) // what it could read, as URL.Query keeps
		want := v.Get("sessionId")
		if got := queryValue(raw, "sessionId"); got != want {
			t.Errorf("queryValue(%q) = %q, url.Values.Get says %q", raw, got, want)
		}
	}
}
