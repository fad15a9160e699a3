package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
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
// Printable), and a control character of msg is escaped.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s: %s", Printable(e.Path), e.Line, e.Col, Printable(e.Pointer), escapeControls(e.Msg))
	}
	return fmt.Sprintf("%s: %s: %s", Printable(e.Path), Printable(e.Pointer), escapeControls(e.Msg))
}

// Printable is s as is when every rune of it is printable (strconv.IsPrint,
// a space included), else s quoted as a Go string literal (strconv.Quote):
// a newline or another control character in a file path, a $defs key or a
// JSON pointer cannot then split an error message or a generated comment.
func Printable(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// escapeControls writes every control character of s as a Go escape.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
