package cassettes_test

import (
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
)

func ExampleImportLines() {
	log := `# a session, as a person would write it down
> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}
< not JSON
`
	cp, err := cassettes.ImportLines("session.log", []byte(log))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range cp.Events {
		fmt.Printf("%s: %s\n", ev.From, ev.Data)
	}
	fmt.Println(cp.Warnings)
	_, err = cassettes.ImportLines("bad.log", []byte("? {}\n"))
	fmt.Println(err)
	// Output:
	// client: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}
	// server: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}
	// server: not JSON
	// [line 4: not JSON-RPC (jsonrpc: parse: invalid character 'o' in literal null (expecting 'u')); kept as raw text]
	// import "bad.log": line 1: want "> " (from the client) or "< " (from the server) before the message, not "? {}"
}
