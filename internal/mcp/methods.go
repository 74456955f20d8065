package mcp

import "strings"

// The handshake methods.
const (
	// MethodInitialize opens a session (up to 2025-11-25).
	MethodInitialize = "initialize"
	// MethodDiscover asks a server what it speaks (2026-07-28).
	MethodDiscover = "server/discover"
)

// Handshake reports whether method is a request that tells a client what
// the server speaks and can do: initialize or server/discover.
func Handshake(method string) bool {
	return method == MethodInitialize || method == MethodDiscover
}

// List describes a paginated list method.
type List struct {
	Method string // "tools/list"
	Items  string // the result member holding the page's items: "tools"
	Key    string // the member that identifies an item: "name"
	Kind   string // what ListKind returns for it: "tools"
}

// Lists returns the paginated list methods, in a slice the caller owns.
func Lists() []List {
	var out []List
	for _, m := range [...]string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		l, _ := ListOf(m)
		out = append(out, l)
	}
	return out
}

// ListOf returns the list method named method, and whether it is one.
func ListOf(method string) (List, bool) {
	switch method {
	case "tools/list":
		return List{Method: method, Items: "tools", Key: "name", Kind: "tools"}, true
	case "prompts/list":
		return List{Method: method, Items: "prompts", Key: "name", Kind: "prompts"}, true
	case "resources/list":
		return List{Method: method, Items: "resources", Key: "uri", Kind: "resources"}, true
	case "resources/templates/list":
		return List{Method: method, Items: "resourceTemplates", Key: "uriTemplate", Kind: "resources"}, true
	}
	return List{}, false
}

// ListKind returns the kind of list a list_changed notification or a list
// request is about: "tools", "prompts", "resources" (for resource
// templates too), or "".
func ListKind(method string) string {
	if l, ok := ListOf(method); ok {
		return l.Kind
	}
	switch method {
	case "notifications/tools/list_changed":
		return "tools"
	case "notifications/prompts/list_changed":
		return "prompts"
	case "notifications/resources/list_changed":
		return "resources"
	}
	return ""
}

// ListChanged reports whether method is a notifications/*/list_changed of
// a list kind.
func ListChanged(method string) bool {
	return strings.HasPrefix(method, "notifications/") && strings.HasSuffix(method, "/list_changed") && ListKind(method) != ""
}

// SubscriptionNotification reports whether a server notification is about
// the server's state rather than about a request: a list change or
// notifications/resources/updated. A 2026-07-28 server sends them on
// subscriptions/listen streams, a stateful one on its stream outside any
// request.
func SubscriptionNotification(method string) bool {
	return ListChanged(method) || method == "notifications/resources/updated"
}

// TaskMethod reports whether method names a task by a taskId param:
// tasks/get, tasks/result, tasks/cancel.
func TaskMethod(method string) bool {
	return method == "tasks/get" || method == "tasks/result" || method == "tasks/cancel"
}
