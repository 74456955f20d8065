package matcher

import (
	"errors"
	"fmt"

	"github.com/mcpmock/mcpmock/cassettes"
)

// CheckCassette parses every "match" member of a cassette file (or of an
// overlay, which has the same schema) and reports each bad one as a
// *cassettes.PosError at its file, line and column: name is the file name
// for messages, data its content. It returns nil when all are good.
func CheckCassette(name string, data []byte) error {
	var errs []error
	for _, m := range cassettes.MatchMembers(data) {
		_, err := ParseConfig(m.Raw)
		if err == nil {
			continue
		}
		off := m.Offset
		var ce *ConfigError
		if errors.As(err, &ce) {
			off += ce.Offset
		}
		where := `"match"`
		if m.Interaction >= 0 {
			where = fmt.Sprintf(`interaction %d: "match"`, m.Interaction+1)
		}
		line, col := cassettes.Position(data, off)
		errs = append(errs, &cassettes.PosError{File: name, Line: line, Column: col, Err: fmt.Errorf("%s: %w", where, err)})
	}
	return errors.Join(errs...)
}
