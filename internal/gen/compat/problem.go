package compat

import "fmt"

// Direction is who reads what.
type Direction int

const (
	// Backward: readers built from the new schema read messages written
	// with the old one.
	Backward Direction = iota + 1
	// Forward: readers built from the old schema read messages written
	// with the new one.
	Forward
)

func (d Direction) String() string {
	switch d {
	case Backward:
		return "backward"
	case Forward:
		return "forward"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// explain is what breaking d means, for the output line.
func (d Direction) explain() string {
	if d == Backward {
		return "new readers, old messages"
	}
	return "old readers, new messages"
}

// Mode is which directions a message must keep.
type Mode string

// The modes of a manifest's compat: key.
const (
	ModeFull     Mode = "full"
	ModeBackward Mode = "backward"
	ModeForward  Mode = "forward"
	ModeNone     Mode = "none"
)

// directions are the directions mode checks.
func (m Mode) directions() []Direction {
	switch m {
	case ModeBackward:
		return []Direction{Backward}
	case ModeForward:
		return []Direction{Forward}
	case ModeNone:
		return nil
	}
	return []Direction{Backward, Forward}
}

// Problem is one change that breaks a reader.
type Problem struct {
	Message   string    // the manifest's message name
	Path      string    // where in a message: $ for the whole, $.customer.zip, $.lines[], $.tags.*
	Rule      string    // e.g. type-narrowed
	Direction Direction // the direction that breaks
	Detail    string    // what changed, old before new
}

// String is the output line:
//
//	OrderPlaced: $.amount: type-narrowed: breaks backward (new readers, old messages): type was number, is integer
func (p Problem) String() string {
	return fmt.Sprintf("%s: %s: %s: breaks %s (%s): %s", p.Message, p.Path, p.Rule, p.Direction, p.Direction.explain(), p.Detail)
}

// finding is a problem found inside a schema, before it is placed: Path
// is relative to where the walk started ("" for there).
type finding struct {
	path   string
	rule   string
	detail string
}

// under prefixes the path of each finding with seg (".name", "[]", ".*").
func under(seg string, fs []finding) []finding {
	for i := range fs {
		fs[i].path = seg + fs[i].path
	}
	return fs
}

// place turns findings into problems of message in direction d.
func place(message string, d Direction, fs []finding) []Problem {
	out := make([]Problem, 0, len(fs))
	seen := map[finding]bool{}
	for _, f := range fs {
		if seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, Problem{Message: message, Path: "$" + f.path, Rule: f.rule, Direction: d, Detail: f.detail})
	}
	return out
}

// named picks a rule's name by direction: the same reader/writer mismatch
// is a different change seen from the old and the new schema (a value the
// reader lacks was removed by a new reader, added by a new writer).
func named(d Direction, backward, forward string) string {
	if d == Backward {
		return backward
	}
	return forward
}

// oldNew orders a reader and a writer value as (old, new) for details.
func oldNew[T any](d Direction, r, w T) (old, new T) {
	if d == Backward {
		return w, r
	}
	return r, w
}
