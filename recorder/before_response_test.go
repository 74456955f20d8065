package recorder

import (
	"slices"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/livelog"
)

// TestServerMessagesBeforeTheResponseAreMarked: a server message of its own
// (a subscribed resource changed, a list changed) that comes while the last
// client message, a request, awaits its response is marked BeforeResponse;
// one after the response, or after a later client notification, is not.
// AfterExchange says how many of the request's own messages came first. Without time
// offsets (the default) nothing else in the cassette says which side of
// the response it came on.
func TestServerMessagesBeforeTheResponseAreMarked(t *testing.T) {
	b := newBuilder(cassettes.New(), livelog.Discard)
	client := func(s string) { b.add(cassettes.FromClient, []byte(s), 0) }
	server := func(s string) { b.add(cassettes.FromServer, []byte(s), 0) }
	client(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch","_meta":{"progressToken":"p"}}}`)
	server(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
	server(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"a"}}`)
	// A reply to no request (a client re-sending one) changes nothing.
	client(`{"jsonrpc":"2.0","id":42,"result":{}}`)
	server(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	server(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	server(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"b"}}`)
	client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"touch"}}`)
	client(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	server(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"c"}}`)
	server(`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)

	var got []bool
	var kinds []string
	var after []int
	for _, in := range b.c.Interactions {
		if in.From == cassettes.FromServer {
			got = append(got, in.BeforeResponse)
			kinds = append(kinds, in.Kind())
			after = append(after, in.AfterExchange)
		}
	}
	want := []bool{true, true, false, false}
	// Both came after the call's one progress notification.
	if wantAfter := []int{1, 1, 0, 0}; !slices.Equal(after, wantAfter) {
		t.Errorf("AfterExchange %v, want %v", after, wantAfter)
	}
	if len(got) != len(want) {
		t.Fatalf("server interactions %v, want %d of them", kinds, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server interaction %d (%s): BeforeResponse %v, want %v", i+1, kinds[i], got[i], want[i])
		}
	}
}
