package schema

import "fmt"

// Error is one construct that cannot map to Go.
type Error struct {
	Path      string // schema file path as written in the manifest
	Pointer   string // place in the schema, e.g. "#/properties/items" or "fields[2].type"
	Construct string // the construct, e.g. "union", "$ref"
	Msg       string // what is wrong and what to do instead
}

// Error returns "<path>: <pointer>: <msg>".
func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Path, e.Pointer, e.Msg)
}
