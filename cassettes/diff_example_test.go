package cassettes_test

import (
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
)

func ExampleDiff() {
	old, _ := cassettes.Parse("old.json", []byte(`{"version": 1, "interactions": [
	  {"from": "client", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
	   "response": {"from": "server", "message": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
	     {"name": "get_weather", "description": "Get the weather",
	      "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}},
	     {"name": "forecast", "inputSchema": {"type": "object"}}]}}}}]}`))
	new, _ := cassettes.Parse("new.json", []byte(`{"version": 1, "interactions": [
	  {"from": "client", "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
	   "response": {"from": "server", "message": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
	     {"name": "get_weather", "description": "Get the current weather",
	      "inputSchema": {"type": "object", "properties": {"location": {"type": "string"}, "country": {"type": "string"}},
	                      "required": ["location", "country"]}}]}}}}]}`))
	changes := cassettes.Diff(old, new)
	for _, c := range changes {
		fmt.Println(c)
	}
	fmt.Println(changes.Breaking(), "breaking")
	// Output:
	// BREAKING: tool forecast was removed
	// changed: tool get_weather: the description changed from "Get the weather" to "Get the current weather"
	// BREAKING: tool get_weather: argument "country" is now required (new, of type "string")
	// 2 breaking
}
