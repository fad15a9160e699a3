package compat

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// enum is the values a view allows by enum and const, and whether it has
// such a list at all (it is closed: a value not listed is rejected).
func (v view) enum() ([]any, bool) {
	var out []any
	closed := false
	for _, s := range v {
		var vals []any
		switch {
		case s.Const != nil:
			vals = []any{*s.Const}
		case s.Enum != nil:
			vals = s.Enum.Values
		default:
			continue
		}
		if !closed {
			out, closed = append([]any(nil), vals...), true
			continue
		}
		var keep []any
		for _, x := range out {
			if contains(vals, x) {
				keep = append(keep, x)
			}
		}
		out = keep
	}
	return out, closed
}

func contains(vals []any, x any) bool {
	for _, v := range vals {
		if reflect.DeepEqual(v, x) {
			return true
		}
	}
	return false
}

// enumRule: each value the writer's enum allows must be one the reader's
// enum lists; an enum (or const) is closed, so a writer without one may
// write a value the reader does not list.
//
//	enum-value-removed (backward): the new enum dropped a value old messages may carry
//	enum-value-added (forward): the new enum added a value old readers reject
//	enum-added (backward): the new schema restricts to a list values that were free
//	enum-removed (forward): the new schema frees values the old one listed
func enumRule(d Direction, r, w view) []finding {
	rv, rClosed := r.enum()
	if !rClosed {
		return nil
	}
	wv, wClosed := w.enum()
	if !wClosed {
		return []finding{{rule: named(d, "enum-added", "enum-removed"),
			detail: fmt.Sprintf(named(d, "the new schema only allows %s", "the new schema no longer restricts the value to %s"), showValues(rv))}}
	}
	var out []finding
	for _, x := range wv {
		if contains(rv, x) {
			continue
		}
		out = append(out, finding{rule: named(d, "enum-value-removed", "enum-value-added"),
			detail: fmt.Sprintf(named(d, "%s was removed; old messages may carry it", "%s was added; old readers reject it"), showValue(x))})
	}
	return out
}

func showValue(x any) string {
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}

func showValues(xs []any) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = showValue(x)
	}
	return strings.Join(parts, ", ")
}
