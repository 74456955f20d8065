package mcp

import "strings"

// notificationSpan is the versions in which one side may send a
// notification: from first to last, both included ("" for no end).
type notificationSpan struct{ first, last string }

// clientNotifications and serverNotifications are the ClientNotification
// and ServerNotification unions of each version's schema.ts.
var (
	clientNotifications = map[string]notificationSpan{
		"notifications/cancelled":          {Version20241105, ""},
		"notifications/progress":           {Version20241105, LatestStateful},
		"notifications/initialized":        {Version20241105, LatestStateful},
		"notifications/roots/list_changed": {Version20241105, LatestStateful},
		"notifications/tasks/status":       {Version20251125, LatestStateful},
	}
	serverNotifications = map[string]notificationSpan{
		"notifications/cancelled":                  {Version20241105, ""},
		"notifications/progress":                   {Version20241105, ""},
		"notifications/message":                    {Version20241105, ""},
		"notifications/resources/updated":          {Version20241105, ""},
		"notifications/resources/list_changed":     {Version20241105, ""},
		"notifications/tools/list_changed":         {Version20241105, ""},
		"notifications/prompts/list_changed":       {Version20241105, ""},
		"notifications/elicitation/complete":       {Version20251125, LatestStateful},
		"notifications/tasks/status":               {Version20251125, LatestStateful},
		"notifications/subscriptions/acknowledged": {FirstStateless, ""},
	}
)

// NotificationIn reports whether protocol version v (one of Versions) lets
// the client (fromClient) or the server send the notification method. A
// method outside the notifications/ namespace (an extension's) is not
// MCP's to judge: it reports true for it.
func NotificationIn(v string, fromClient bool, method string) bool {
	if !strings.HasPrefix(method, "notifications/") {
		return true
	}
	set := serverNotifications
	if fromClient {
		set = clientNotifications
	}
	s, ok := set[method]
	return ok && v >= s.first && (s.last == "" || v <= s.last)
}

// NotificationVersions returns the versions in which the client
// (fromClient) or the server may send the notification method, oldest
// first; none for a notifications/ method that no version defines.
func NotificationVersions(fromClient bool, method string) []string {
	var out []string
	for _, v := range Versions() {
		if NotificationIn(v, fromClient, method) {
			out = append(out, v)
		}
	}
	return out
}
