package compat

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// arrayRules compares the items of an array, and uniqueItems.
//
//	unique-items-added (backward): old messages may repeat an item
//	unique-items-removed (forward): new messages may repeat an item
func (c *jsonChecker) arrayRules(r, w view) []finding {
	var out []finding
	if r.unique() && !w.unique() {
		out = append(out, finding{rule: named(c.dir, "unique-items-added", "unique-items-removed"),
			detail: named(c.dir, "the new schema sets uniqueItems", "the new schema drops uniqueItems")})
	}
	ri, wi := r.items(), w.items()
	if ri != nil {
		out = append(out, under("[]", c.check(ri, wi))...)
	}
	rt, wt := r.tuple(), w.tuple()
	for i, rs := range rt {
		var ws view
		if i < len(wt) {
			ws = wt[i]
		} else if wi != nil {
			ws = wi
		}
		out = append(out, under(fmt.Sprintf("[%d]", i), c.check(rs, ws))...)
	}
	return out
}

func (v view) unique() bool {
	for _, s := range v {
		if s.UniqueItems {
			return true
		}
	}
	return false
}

// items is the schema of every item (items in 2020-12, items as one
// schema or additionalItems after a tuple before), nil for none.
func (v view) items() view {
	var ss []*jsonschema.Schema
	for _, s := range v {
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			ss = append(ss, it)
		case []*jsonschema.Schema:
			if as, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				ss = append(ss, as)
			}
		}
		if s.Items2020 != nil {
			ss = append(ss, s.Items2020)
		}
	}
	if len(ss) == 0 {
		return nil
	}
	return viewOf(ss...)
}

// tuple is the schema of each leading item (prefixItems, or items as an
// array before 2020-12).
func (v view) tuple() []view {
	var out []view
	for _, s := range v {
		list := s.PrefixItems
		if it, ok := s.Items.([]*jsonschema.Schema); ok {
			list = it
		}
		for i, x := range list {
			if i < len(out) {
				out[i] = out[i].and(viewOf(x))
			} else {
				out = append(out, viewOf(x))
			}
		}
	}
	return out
}
