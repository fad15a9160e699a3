package compat

import (
	"fmt"
	"slices"
	"strings"
)

// types is the set of JSON types a view allows, nil for any. A writer
// schema with an enum or a const but no type allows the types of its
// values.
func (v view) types() []string {
	var out []string
	any := true
	for _, s := range v {
		if s.Types == nil || s.Types.IsEmpty() {
			continue
		}
		ts := s.Types.ToStrings()
		if any {
			out, any = ts, false
			continue
		}
		out = slices.DeleteFunc(out, func(t string) bool { return !typeIn(t, ts) })
	}
	if any {
		if vals, ok := v.enum(); ok {
			for _, x := range vals {
				if t := jsonType(x); !slices.Contains(out, t) {
					out = append(out, t)
				}
			}
			return out
		}
		return nil
	}
	return out
}

// typeIn says whether a value of type t is one of ts (an integer is a
// number).
func typeIn(t string, ts []string) bool {
	return slices.Contains(ts, t) || (t == "integer" && slices.Contains(ts, "number"))
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		if s := fmt.Sprint(x); !strings.ContainsAny(s, ".eE") {
			return "integer"
		}
		return "number"
	}
}

// typeRule: each type the writer allows must be one the reader allows.
//
//	type-narrowed (backward): the new schema allows fewer types
//	type-widened (forward): the new schema allows more types
//	type-changed: the new schema allows other types
func typeRule(d Direction, r, w view) []finding {
	rt, wt := r.types(), w.types()
	if rt == nil {
		return nil
	}
	var lost []string
	if wt == nil {
		lost = []string{"any type"}
	}
	for _, t := range wt {
		if !typeIn(t, rt) {
			lost = append(lost, t)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	rule := named(d, "type-narrowed", "type-widened")
	if wt != nil {
		for _, t := range rt {
			if !typeIn(t, wt) {
				rule = "type-changed" // the reader allows one the writer does not: not a subset
			}
		}
	}
	old, new := oldNew(d, showTypes(rt), showTypes(wt))
	return []finding{{rule: rule, detail: fmt.Sprintf("type was %s, is %s", old, new)}}
}

func showTypes(ts []string) string {
	switch len(ts) {
	case 0:
		return "any"
	case 1:
		return ts[0]
	}
	return "[" + strings.Join(ts, ", ") + "]"
}
