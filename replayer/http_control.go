package replayer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// controlPath is the end of the control endpoint's path.
const controlPath = "_mcpmock/notify"

// isControl reports whether the path p ends in the control endpoint's
// (HTTPOptions.Control).
func isControl(p string) bool {
	return p == controlPath || strings.HasSuffix(p, "/"+controlPath)
}

// serveNotify is the control endpoint POST /_mcpmock/notify?method=M: it
// sends the server notification M (default notifications/tools/list_changed)
// to every live session, as Engine.Notify does, with the request body (a
// JSON object, optional) as its params. It answers {"sessions": n}.
func (h *HTTPHandler) serveNotify(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed: POST /_mcpmock/notify?method=notifications/tools/list_changed", http.StatusMethodNotAllowed)
		return
	}
	method := r.URL.Query().Get("method")
	if method == "" {
		method = "notifications/tools/list_changed"
	}
	if !strings.HasPrefix(method, "notifications/") {
		http.Error(w, fmt.Sprintf("Bad Request: %q is not a notification method", method), http.StatusBadRequest)
		return
	}
	var params json.RawMessage
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&params); err != nil && err.Error() != "EOF" {
		http.Error(w, "Bad Request: the body must be a JSON object (the notification's params) or empty", http.StatusBadRequest)
		return
	}
	if len(params) > 0 && params[0] != '{' {
		http.Error(w, "Bad Request: the body must be a JSON object (the notification's params) or empty", http.StatusBadRequest)
		return
	}
	n := h.e.Notify(method, params)
	h.e.opts.Logger.Info(fmt.Sprintf("control: sent %s to %d sessions", method, n))
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"sessions\":%d}\n", n)
}
