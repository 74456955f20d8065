package main

// examples returns the examples that a command's --help ends with ("" for
// none): what a user types, with what it does.
func examples(command string) string {
	switch command {
	case "record":
		return `  mcpmock record -c weather.json -- go run ./examples/weather/server
      put the tap between a stdio client and the server it starts (the client spawns this command)
  mcpmock record -c session.json --upstream http://127.0.0.1:8080/mcp --listen 127.0.0.1:0
      a recording reverse proxy: point the HTTP client at the URL mcpmock prints
  mcpmock record -c session.json --upstream https://mcp.example.com/mcp
      a bridge: a stdio client records an HTTP server
  mcpmock record -c session.json --listen 127.0.0.1:0 -- weather-server
      a bridge: an HTTP client records a stdio server
  mcpmock record -c session.json --deny-tools 'delete_*' --confirm destructive -- weather-server
      the guard: refuse some tools, ask a person before destructive calls
  mcpmock record -c weather.json --redact-value "$API_KEY" --keep-timing -- weather-server
      hide one more secret; keep the time offsets for --latency recorded
`
	case "replay":
		return `  mcpmock replay -c weather.json
      serve the cassette on stdin/stdout (a client spawns this command as its server)
  mcpmock replay -c weather.json --listen 127.0.0.1:0
      serve it over Streamable HTTP (/mcp) and HTTP+SSE (/sse)
  mcpmock replay -c weather.json --fault 'get_weather#3=tool-error:API rate limit exceeded'
      the third get_weather call fails as the recorded server's rate limit would
  mcpmock replay -c weather.json --fault 'tools/list=delay:2s' --fault 'get_weather~0.2=no-answer' --seed 42
      a slow tools/list, and 20% of the calls hang, the same ones on every run
  mcpmock replay -c weather.json --match-ignore arguments.timestamp
      accept a request whose timestamp differs from the recorded one
  mcpmock replay -c weather.json --match '{"tools":{"get_weather":{"regex":{"arguments.location":"^New "}}}}'
      any location that starts with "New " gets the recorded answer
  mcpmock replay --mode once -c weather.json -- weather-server
      record the first time, replay after that
  mcpmock replay --mode new-episodes -c weather.json -- weather-server
      replay what matches; forward a miss to the live server and append its answer

Match rules (--match, and "match" in a cassette) are a JSON object: "ignore": [PATH...], "subset": [PATH...] or
true, "regex": {PATH: REGEXP}, "type": {PATH: string|number|boolean|object|array|null|any}, "unordered":
[PATH...], "tools": {TOOL: {the same}}. PATH is a gjson path of the request's params (arguments.location).
A request that matches nothing gets a JSON-RPC error that names the closest recorded request and the
difference, and replay then exits 1 (a miss fails CI).
`
	case "demo":
		return `  mcpmock demo
      record the bundled weather example through the tap, replay it to another client, compare
  mcpmock demo --keep weather.json
      keep the recorded cassette (then: mcpmock cassette show weather.json)
`
	case "view":
		return `  mcpmock view weather.json
      serve the page on a free loopback port; its URL is printed on stderr
  mcpmock view --open before.json after.json
      two cassettes, in the browser (side by side with the checkbox)
  mcpmock view --html session.html weather.json
      one self-contained file, for a CI artifact (it loads nothing from the network)
`
	case "cassette lint":
		return `  mcpmock cassette lint testdata/*.json
      exit 1 when a cassette does not load, has a bad match rule, or holds a secret in clear
  mcpmock cassette lint --max-age 720h --max-age-fail testdata/*.json
      also fail on recordings older than 30 days
`
	case "cassette show":
		return `  mcpmock cassette show weather.json
      the session as a timeline: who sent what, tools, arguments, results, errors
  mcpmock cassette show --full weather.json | less
      every message whole under its line
`
	case "cassette redact":
		return `  mcpmock cassette redact -c weather.json --redact-value "$API_KEY"
      hide a secret in a cassette, in place (atomically)
  mcpmock cassette redact -c weather.json --dry-run
      list what the default rules would change
`
	case "cassette diff":
		return `  mcpmock cassette diff testdata/weather.json new/weather.json
      one line per change, BREAKING ones marked; exit 1 when anything changed
  mcpmock cassette diff --breaking testdata/weather.json new/weather.json
      exit 1 only for a change that breaks a client (a tool removed, an argument newly required...)
  mcpmock cassette diff --json old.json new.json | jq '.changes[] | select(.breaking)'
      the changes as JSON
`
	case "cassette import":
		return `  mcpmock cassette import --from har session.har -c testdata/session.json
      a HAR of a browser's or a proxy's (mitmproxy, Charles, Fiddler) MCP traffic, as record would have written it
  mcpmock cassette import --from mcpsnoop trace.jsonl -c weather.json --keep-timing
      an mcpsnoop --trace-file, keeping its time offsets (for replay --latency recorded)
  mcpmock cassette import --from lines session.log -c weather.json --force --redact-value "$API_KEY"
      "> " and "< " lines; replace the cassette, hiding one more secret
`
	case "cassette verify":
		return `  mcpmock cassette verify -c weather.json -- weather-server
      send the cassette's requests to the live server; exit 1 for a change that breaks a client
  mcpmock cassette verify -c weather.json --upstream https://mcp.example.com/mcp --fail-on-change
      against an HTTP server; any difference fails
`
	}
	return ""
}
