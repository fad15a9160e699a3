package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/oneline"
)

// Pos is a position in the manifest, 1-based.
type Pos struct {
	Line, Col int
}

// Error is one problem at a position of a file.
type Error struct {
	File string
	Pos  Pos
	Msg  string
}

// Error returns "file:line:col: msg" (just "file: msg" without a position),
// on one line: a control character of msg (a newline in a quoted value) is
// written as its Go escape.
func (e *Error) Error() string {
	msg := oneline.Escape(e.Msg)
	switch {
	case e.Pos.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, msg)
	case e.Pos.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Pos.Line, msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, msg)
}

// Errors is every problem found in a manifest, in position order; one line
// each. errors.As finds each *Error through Unwrap.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns each error, for errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Sorted returns es in file, line, column and message order, without
// duplicates, or nil when es is empty.
func (es Errors) Sorted() Errors {
	if len(es) == 0 {
		return nil
	}
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Msg, b.Msg))
	})
	return slices.CompactFunc(out, func(a, b *Error) bool { return *a == *b })
}
