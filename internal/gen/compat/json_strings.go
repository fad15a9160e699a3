package compat

import "fmt"

// format is the view's format, "" for none (the runtime asserts formats:
// a value that breaks one is rejected).
func (v view) format() string {
	for _, s := range v {
		if s.Format != nil {
			return s.Format.Name
		}
	}
	return ""
}

// pattern is the view's pattern, "" for none.
func (v view) pattern() string {
	for _, s := range v {
		if s.Pattern != nil {
			return s.Pattern.String()
		}
	}
	return ""
}

// formatRule: a reader's format must be the writer's.
//
//	format-added (backward): old messages were not held to it
//	format-removed (forward): new messages are not held to the old one
//	format-changed: another format
func formatRule(d Direction, r, w view) []finding {
	return sameString(d, "format", r.format(), w.format())
}

// patternRule: a reader's pattern must be the writer's (two regular
// expressions are not compared for inclusion: another one is a change).
//
//	pattern-added (backward), pattern-removed (forward), pattern-changed
func patternRule(d Direction, r, w view) []finding {
	return sameString(d, "pattern", r.pattern(), w.pattern())
}

func sameString(d Direction, keyword, r, w string) []finding {
	if r == "" || r == w {
		return nil
	}
	if w == "" {
		return []finding{{rule: keyword + named(d, "-added", "-removed"),
			detail: fmt.Sprintf(named(d, "the new schema requires %s %q", "the new schema drops %s %q"), keyword, r)}}
	}
	old, new := oldNew(d, r, w)
	return []finding{{rule: keyword + "-changed", detail: fmt.Sprintf("%s was %q, is %q", keyword, old, new)}}
}
