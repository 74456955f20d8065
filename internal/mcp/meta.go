package mcp

// The _meta keys that MCP reserves (its io.modelcontextprotocol/ prefix).
const (
	MetaPrefix = "io.modelcontextprotocol/"
	// MetaProtocolVersion, MetaClientInfo and MetaClientCapabilities are
	// what a 2026-07-28 request carries in place of a session.
	MetaProtocolVersion    = MetaPrefix + "protocolVersion"
	MetaClientInfo         = MetaPrefix + "clientInfo"
	MetaClientCapabilities = MetaPrefix + "clientCapabilities"
	// MetaServerInfo is in the result of server/discover.
	MetaServerInfo = MetaPrefix + "serverInfo"
	// MetaSubscriptionID marks a notification sent on the stream of the
	// subscriptions/listen request that it names.
	MetaSubscriptionID = MetaPrefix + "subscriptionId"
	// MetaLogLevel is a 2026-07-28 request's logging level.
	MetaLogLevel = MetaPrefix + "logLevel"
	// MetaRelatedTask ties a message to a task.
	MetaRelatedTask = MetaPrefix + "related-task"
)
