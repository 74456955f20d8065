package cassettes

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestSecretMember is the one rule of secret member names, both ways: the
// names of credentials in every case and separator style, and MCP's own
// members and the counts and cursors that merely contain "token".
func TestSecretMember(t *testing.T) {
	for _, c := range []struct {
		name   string
		secret bool
	}{
		// The word token, alone or at the end of a name.
		{"token", true},
		{"Token", true},
		{"TOKEN", true},
		{"github_token", true},
		{"GITHUB_TOKEN", true},
		{"githubToken", true},
		{"GitHubToken", true},
		{"github-token", true},
		{"api_token", true},
		{"apiToken", true},
		{"access_token", true},
		{"refreshToken", true},
		{"id_token", true},
		{"x-auth-token", true},
		{"bearerToken", true},
		{"sessionToken", true},
		{"csrf_token", true},
		// Secrets, passwords, keys and credentials.
		{"secret", true},
		{"client_secret", true},
		{"webhookSecret", true},
		{"password", true},
		{"Password", true},
		{"db_password", true},
		{"newPassword", true},
		{"passwd", true},
		{"passphrase", true},
		{"api_key", true},
		{"apiKey", true},
		{"API-KEY", true},
		{"apikey", true},
		{"x-api-key", true},
		{"openai_api_key", true},
		{"private_key", true},
		{"privateKey", true},
		{"ssh_private_key", true},
		{"secret_key", true},
		{"aws_secret_access_key", true},
		{"access_key_id", true},
		{"storageAccessKey", true},
		{"signing_key", true},
		{"credentials", true},
		{"Credentials", true},
		{"googleCredentials", true},
		{"credential", true},
		{"authorization", true},
		{"proxy_authorization", true},
		{"cookie", true},
		{"Set-Cookie", true},
		// MCP's own members.
		{"progressToken", false},
		{"progress_token", false},
		{"cursor", false},
		{"nextCursor", false},
		{"sessionId", false},
		{"requestId", false},
		{"_meta", false},
		{"name", false},
		{"io.modelcontextprotocol/protocolVersion", false},
		{"protocolVersion", false},
		// Counts of tokens (sampling/createMessage, usage reports).
		{"maxTokens", false},
		{"max_tokens", false},
		{"MAX_TOKENS", false},
		{"tokens", false},
		{"inputTokens", false},
		{"outputTokens", false},
		{"totalTokens", false},
		{"input_tokens", false},
		{"cache_read_input_tokens", false},
		{"tokenCount", false},
		{"token_count", false},
		{"tokenType", false},
		{"token_type", false},
		{"tokenizer", false},
		{"tokenUrl", false},
		{"tokenLimit", false},
		// Paging tokens are cursors.
		{"pageToken", false},
		{"nextPageToken", false},
		{"next_page_token", false},
		{"nextToken", false},
		{"continuationToken", false},
		// Names that contain a secret word without being one.
		{"secretName", false},
		{"passwordPolicy", false},
		{"publicKey", false},
		{"primaryKey", false},
		{"key", false},
		{"keyboard", false},
		{"monkey", false},
		{"author", false},
		{"credentialsType", false},
		{"cookiePolicy", false},
		{"", false},
	} {
		if got := SecretMember(c.name); got != c.secret {
			t.Errorf("SecretMember(%q) = %v, want %v", c.name, got, c.secret)
		}
	}
}

// TestSecretName is the rule of secret header, query parameter and flag
// names: every secret member name, and the names that only a header or a
// URL uses for a secret.
func TestSecretName(t *testing.T) {
	for _, c := range []struct {
		name   string
		secret bool
	}{
		{"Authorization", true},
		{"Proxy-Authorization", true},
		{"Cookie", true},
		{"Set-Cookie", true},
		{"Mcp-Session-Id", true},
		{"X-Api-Key", true},
		{"X-Auth-Token", true},
		{"X-GitHub-Token", true},
		{"api_key", true},
		{"token", true},
		{"access_token", true},
		{"key", true},
		{"sig", true},
		{"signature", true},
		{"auth", true},
		{"sessionId", true}, // the HTTP+SSE message endpoint's query
		{"session_id", true},
		{"client-secret", true},
		{"DB_PASSWORD", true},
		{"SERVICE_TOKEN", true},
		{"Content-Type", false},
		{"Mcp-Protocol-Version", false},
		{"Mcp-Method", false},
		{"Last-Event-Id", false},
		{"max-tokens", false},
		{"page_token", false},
		{"cursor", false},
		{"location", false},
	} {
		if got := SecretName(c.name); got != c.secret {
			t.Errorf("SecretName(%q) = %v, want %v", c.name, got, c.secret)
		}
	}
}

// secretArguments are tools/call arguments whose names say secret, each
// with a value that no pattern knows: only the name can give them away.
var secretArguments = map[string]string{
	"token":        "plain-tok-0001",
	"github_token": "plain-gh-0002",
	"api_token":    "plain-api-0003",
	"apiKey":       "plain-key-0004",
	"password":     "plain-pw-0005",
	"credentials":  "plain-cred-0006",
	"private_key":  "plain-pk-0007",
}

// TestRedactSecretNamedArguments: the values of secret-named arguments
// become the placeholder in the request, and MCP's own members and token
// counts are kept, in the request and in the server's messages.
func TestRedactSecretNamedArguments(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules())
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"location": "Paris", "maxTokens": "mt-kept-1", "inputTokens": "it-kept-2"}
	for k, v := range secretArguments {
		args[k] = v
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "deploy", "arguments": args, "_meta": map[string]any{"progressToken": "pt-kept-3"}}})
	sampling := `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":"mt-kept-4"}}`
	resp := `{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"totalTokens":"tt-kept-5","nextCursor":"nc-kept-6","token":"plain-tok-0008"}}}`
	in := Interaction{From: FromClient, Request: req,
		Exchange: []Message{{From: FromServer, Message: json.RawMessage(sampling)}},
		Response: &Message{From: FromServer, Message: json.RawMessage(resp)}}
	rd.RedactInteraction(&in)
	all := string(in.Request) + string(in.Exchange[0].Message) + string(in.Response.Message)
	for name, v := range secretArguments {
		if strings.Contains(all, v) {
			t.Errorf("the value of %s is kept: %s", name, in.Request)
		}
	}
	if strings.Contains(all, "plain-tok-0008") {
		t.Errorf("the token in the result is kept: %s", in.Response.Message)
	}
	for _, kept := range []string{"mt-kept-1", "it-kept-2", "pt-kept-3", "mt-kept-4", "tt-kept-5", "nc-kept-6", `"deploy"`, `"Paris"`} {
		if !strings.Contains(all, kept) {
			t.Errorf("%s was redacted:\n%s", kept, all)
		}
	}
	if n := strings.Count(string(in.Request), RedactedPlaceholder); n != len(secretArguments) {
		t.Errorf("%d placeholders in the request, want %d: %s", n, len(secretArguments), in.Request)
	}
}

// A number, an object or an array under a secret's name is a secret too;
// the same name in a JSON Schema's properties describes one and is kept.
func TestRedactSecretNamedValuesOfAnyType(t *testing.T) {
	rd, err := NewRedactor(DefaultRedactRules())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"number", `{"password":123456,"maxTokens":50}`, `{"password":"[REDACTED]","maxTokens":50}`},
		{"negative number", `{"pin_secret":-1.5e3}`, `{"pin_secret":"[REDACTED]"}`},
		{"object", `{"credentials":{"user":"u1","pass":"p1"},"name":"n"}`, `{"credentials":"[REDACTED]","name":"n"}`},
		{"array", `{"api_key":["k1","k2"]}`, `{"api_key":"[REDACTED]"}`},
		{"nested object with a secret inside", `{"a":{"token":{"v":"t1","password":"p2"}}}`, `{"a":{"token":"[REDACTED]"}}`},
		{"null and booleans are no secrets", `{"token":null,"password":false}`, `{"token":null,"password":false}`},
		{"schema properties", `{"inputSchema":{"type":"object","properties":{"token":{"type":"string"},"credentials":{"type":"object","properties":{"password":{"type":"string"}}}},"required":["token"]}}`,
			`{"inputSchema":{"type":"object","properties":{"token":{"type":"string"},"credentials":{"type":"object","properties":{"password":{"type":"string"}}}},"required":["token"]}}`},
		{"schema definitions", `{"$defs":{"api_key":{"type":"string"}},"definitions":{"secret":{"type":"string"}}}`,
			`{"$defs":{"api_key":{"type":"string"}},"definitions":{"secret":{"type":"string"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := rd.RedactJSON([]byte(tc.in))
			if string(got) != tc.want {
				t.Errorf("RedactJSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestRedactURL: a URL is shown without its password and the values of its
// secret-named query parameters; the rest stays, and what is no URL is
// redacted by the patterns.
func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/mcp"},
		{"https://api.example.com/mcp?api_key=s3cr3t&region=eu", "https://api.example.com/mcp?api_key=%5BREDACTED%5D&region=eu"},
		{"https://api.example.com/mcp?client_secret=s3cr3t&token=t0k3n", "https://api.example.com/mcp?client_secret=%5BREDACTED%5D&token=%5BREDACTED%5D"},
		{"https://user:s3cr3t@api.example.com/mcp", "https://user:xxxxx@api.example.com/mcp"},
		{"::not a url?api_key=s3cr3tvalue", "::not a url?api_key=[REDACTED]"},
	} {
		if got := RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	err := RedactURLError(&url.Error{Op: "Post", URL: "https://api.example.com/mcp?api_key=s3cr3t", Err: errors.New("connection refused")})
	if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("RedactURLError: %v", err)
	}
}
