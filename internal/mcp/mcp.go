// Package mcp holds the facts of the Model Context Protocol that more than
// one part of mcpmock relies on, each once: the protocol versions and what
// changed between them, the HTTP header names and the Value Encoding of
// their values, the method sets (handshakes, lists, list changes, tasks),
// the _meta keys, and accessors that read a request's params.
//
// Everything here is a constant or a pure function of its arguments: the
// package has no state. A version is compared as a string, which orders
// MCP's YYYY-MM-DD versions by date.
//
//	if mcp.Stateless(mcp.MetaVersion(msg.Params)) {
//		// no session: the 2026-07-28 era
//	}
package mcp

// The protocol versions of MCP.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// The versions where the protocol's eras begin and end.
const (
	// LatestStateful is the last version with initialize and sessions.
	LatestStateful = Version20251125
	// FirstStateless is the first version without sessions: server/discover,
	// per-request _meta, the Mcp-Method and Mcp-Name headers.
	FirstStateless = Version20260728
	// FirstWithoutBatches is the first version without JSON-RPC batches.
	FirstWithoutBatches = Version20250618
	// FirstToolInputErrors is the first version in which arguments that fail
	// a tool's input schema are a tool execution error (a result with
	// isError) rather than JSON-RPC error -32602.
	FirstToolInputErrors = Version20251125
)

// Versions returns the protocol versions of MCP, oldest first, in a slice
// the caller owns.
func Versions() []string {
	return []string{Version20241105, Version20250326, Version20250618, Version20251125, Version20260728}
}

// Known reports whether v is one of Versions.
func Known(v string) bool {
	switch v {
	case Version20241105, Version20250326, Version20250618, Version20251125, Version20260728:
		return true
	}
	return false
}

// Stateless reports whether v is of the stateless era (2026-07-28 on);
// false for "" (no version).
func Stateless(v string) bool {
	return v >= FirstStateless
}

// Batches reports whether a session of version v may be sent JSON-RPC
// batches: a version before 2025-06-18, or "" (none negotiated yet).
func Batches(v string) bool {
	return v < FirstWithoutBatches
}

// StreamableBatches reports whether a Streamable HTTP request whose
// Mcp-Protocol-Version header is header speaks 2025-03-26, the one version
// of that transport with batches, whose clients may leave the header out.
func StreamableBatches(header string) bool {
	return header == "" || header == Version20250326
}

// ToolInputErrors reports whether a server of version v answers a
// tools/call whose arguments fail the input schema with a tool result with
// isError (2025-11-25 on); false for "".
func ToolInputErrors(v string) bool {
	return v >= FirstToolInputErrors
}
