module github.com/mcpmock/mcpmock

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/mark3labs/mcp-go v1.2.1 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/tidwall/gjson v1.20.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.3.0 // indirect
)
