package compat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// view is a schema at one place of a message as a reader or a writer sees
// it: the conjunction of the schema, what its $ref (or $dynamicRef) points
// to and its allOf, each followed in turn. An empty view is the schema
// true: anything.
type view []*jsonschema.Schema

func viewOf(ss ...*jsonschema.Schema) view {
	var v view
	seen := map[*jsonschema.Schema]bool{}
	var add func(s *jsonschema.Schema)
	add = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		v = append(v, s)
		add(s.Ref)
		add(s.RecursiveRef)
		if s.DynamicRef != nil {
			add(s.DynamicRef.Ref)
		}
		for _, a := range s.AllOf {
			add(a)
		}
	}
	for _, s := range ss {
		add(s)
	}
	return v
}

// and is the conjunction of two views.
func (v view) and(o view) view {
	return viewOf(append(append([]*jsonschema.Schema{}, v...), o...)...)
}

// key identifies the view as a set of schemas, for the checker's memo.
func (v view) key() string {
	keys := make([]string, len(v))
	for i, s := range v {
		keys[i] = fmt.Sprintf("%p", s)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// never is true for a view that accepts nothing (the schema false).
func (v view) never() bool {
	for _, s := range v {
		if s.Bool != nil && !*s.Bool {
			return true
		}
	}
	return false
}

// branches are the alternatives of the first anyOf or oneOf of the view,
// each conjoined with the rest of the view; nil when there is none. bare
// gives the schema that held them without them (see bareOf).
func (v view) branches(bare func(*jsonschema.Schema) *jsonschema.Schema) []view {
	for _, s := range v {
		alts := s.AnyOf
		if len(alts) == 0 {
			alts = s.OneOf
		}
		if len(alts) == 0 {
			continue
		}
		rest := v.without(s)
		out := make([]view, 0, len(alts))
		for _, a := range alts {
			out = append(out, rest.and(viewOf(a)).and(view{bare(s)}))
		}
		return out
	}
	return nil
}

// without is v less one conjunct.
func (v view) without(s *jsonschema.Schema) view {
	var out view
	for _, x := range v {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// bareOf returns s without its anyOf, oneOf, $ref and allOf (already
// in the view), so that a branch keeps the other keywords of the schema
// that holds the alternatives; one copy per schema, so that a recursive
// schema gives the same views again and the memo stops the walk.
func bareOf(copies map[*jsonschema.Schema]*jsonschema.Schema) func(*jsonschema.Schema) *jsonschema.Schema {
	return func(s *jsonschema.Schema) *jsonschema.Schema {
		if c, ok := copies[s]; ok {
			return c
		}
		c := *s
		c.AnyOf, c.OneOf, c.Ref, c.AllOf, c.RecursiveRef, c.DynamicRef = nil, nil, nil, nil, nil, nil
		copies[s] = &c
		return &c
	}
}
