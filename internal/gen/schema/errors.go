package schema

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/oneline"
)

// Error is one construct that cannot map to Go.
type Error struct {
	Path      string // schema file path as written in the manifest
	Pointer   string // place in the schema, e.g. "#/properties/items" or "#/fields/2/type"
	Construct string // the construct, e.g. "union", "$ref"
	Msg       string // what is wrong and what to do instead
	// Line and Col place the value at Pointer in the file (1-based, the
	// column in bytes); 0 when it cannot be placed.
	Line, Col int
}

// Error returns "<path>:<line>:<col>: <pointer>: <msg>" ("<path>: <pointer>:
// <msg>" when the place is not known), on one line: a path or pointer
// holding a character that is not plain printable text is quoted (see
// oneline.Quote), and a control character of msg is escaped.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s: %s", oneline.Quote(e.Path), e.Line, e.Col, oneline.Quote(e.Pointer), oneline.Escape(e.Msg))
	}
	return fmt.Sprintf("%s: %s: %s", oneline.Quote(e.Path), oneline.Quote(e.Pointer), oneline.Escape(e.Msg))
}
