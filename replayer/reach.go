package replayer

import (
	"fmt"
	"slices"

	"github.com/tidwall/gjson"
)

// warnUnreachable logs, once at the start, the scripts that can never fire
// and the matching rules that can never apply, because they name a tool that
// the recording neither lists nor calls (a typo such as get_wether): such a
// script fires only if a client calls a tool the server never offered. A
// script of a method the cassette never holds is logged too when it has no
// answer of its own, since it changes the recorded answer, and there is none.
func (e *Engine) warnUnreachable() {
	c := e.cassette
	for _, sc := range e.scripted {
		if sc.req.Method == "tools/call" {
			name := gjson.GetBytes(sc.req.Params, "name")
			if name.Type != gjson.String {
				continue
			}
			if unknown, known := c.UnknownTool(name.String()); unknown {
				e.opts.Logger.Warn(fmt.Sprintf("%s scripts tools/call of tool %q, which the cassette neither lists nor calls (%s): it fires only if a client calls a tool the server never offered", sc.source, name.String(), known))
			}
			continue
		}
		if len(e.byMethod[sc.req.Method]) == 0 && sc.in.Response == nil {
			e.opts.Logger.Warn(fmt.Sprintf("%s changes the recorded answer to %s, and the cassette holds no %s request: it never fires", sc.source, sc.req.Method, sc.req.Method))
		}
	}
	for _, name := range e.ruleTools() {
		if unknown, known := c.UnknownTool(name); unknown {
			e.opts.Logger.Warn(fmt.Sprintf("the cassette's \"match\" has rules for tool %q, which it neither lists nor calls (%s): they never apply", name, known))
		}
	}
}

// ruleTools returns the tools that the cassette's "match" members (its own
// and its interactions') have rules for.
func (e *Engine) ruleTools() []string {
	var names []string
	add := func(match []byte) {
		gjson.GetBytes(match, "tools").ForEach(func(k, _ gjson.Result) bool {
			if !slices.Contains(names, k.String()) {
				names = append(names, k.String())
			}
			return true
		})
	}
	add(e.cassette.Match)
	for i := range e.cassette.Interactions {
		add(e.cassette.Interactions[i].Match)
	}
	return names
}
