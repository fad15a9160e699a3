package compat

import (
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// objectRules compares what a reader and a writer say of an object's
// properties, then the properties both declare, one by one.
func (c *jsonChecker) objectRules(r, w view) []finding {
	var out []finding
	out = append(out, requiredRule(c.dir, r, w)...)
	out = append(out, closedRule(c.dir, r, w)...)
	for _, p := range w.propertyNames(r) {
		rp, rKnown := r.property(p)
		wp, wKnown := w.property(p)
		switch {
		case rKnown && wKnown:
			out = append(out, under(field(p), c.check(rp, wp))...)
		case wKnown && r.closedTo(p):
			out = append(out, finding{path: field(p), rule: named(c.dir, "property-removed", "property-added"),
				detail: named(c.dir, "old messages may carry it, and the new schema allows no property it does not declare",
					"new messages may carry it, and the old schema allows no property it does not declare")})
		case wKnown && rp != nil, rKnown && wp != nil:
			// one side gives p by additionalProperties or patternProperties
			out = append(out, under(field(p), c.check(rp, wp))...)
		}
	}
	if ra, wa := r.additional(), w.additional(); ra != nil && wa != nil {
		out = append(out, under(".*", c.check(ra, wa))...)
	}
	return out
}

// field is the path segment of a property.
func field(name string) string { return "." + name }

// requiredRule: a property the reader requires must be one the writer
// requires.
//
//	property-newly-required (backward): old messages may lack it
//	property-removed (forward): the new schema no longer has a property old readers require
//	property-made-optional (forward): new messages may lack a property old readers require
func requiredRule(d Direction, r, w view) []finding {
	var out []finding
	for _, p := range r.required() {
		if slices.Contains(w.required(), p) {
			continue
		}
		_, declared := w.property(p)
		f := finding{path: field(p), rule: "property-newly-required", detail: "old messages may lack it"}
		if d == Forward {
			f.rule, f.detail = "property-made-optional", "the new schema no longer requires it; old readers do"
			if !declared {
				f.rule, f.detail = "property-removed", "the new schema no longer has it; old readers require it"
			}
		}
		out = append(out, f)
	}
	return out
}

// closedRule: a reader closed to undeclared properties (additionalProperties
// false or a schema, unevaluatedProperties false) reads a writer open to
// them.
//
//	additional-properties-closed (backward): old messages may carry properties the new schema does not declare
//	additional-properties-opened (forward): new messages may carry properties the old schema does not declare
func closedRule(d Direction, r, w view) []finding {
	if !r.closed() || w.closed() || !w.mayBeObject() {
		return nil
	}
	return []finding{{rule: named(d, "additional-properties-closed", "additional-properties-opened"),
		detail: named(d, "the new schema sets additionalProperties; the old one allowed any property",
			"the new schema allows any property; the old one set additionalProperties")}}
}

// required is every property a view requires.
func (v view) required() []string {
	var out []string
	for _, s := range v {
		for _, p := range s.Required {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// property is the view of property p: the conjunction of every schema the
// view gives it (properties, else a matching patternProperties, else
// additionalProperties as a schema), and whether some conjunct declares
// it by name.
func (v view) property(p string) (view, bool) {
	var ss []*jsonschema.Schema
	declared := false
	for _, s := range v {
		if ps, ok := s.Properties[p]; ok {
			ss, declared = append(ss, ps), true
			continue
		}
		matched := false
		for re, ps := range s.PatternProperties {
			if re.MatchString(p) {
				ss, matched = append(ss, ps), true
			}
		}
		if as, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
			ss = append(ss, as)
		}
	}
	if len(ss) == 0 {
		return nil, declared
	}
	return viewOf(ss...), declared
}

// propertyNames are the properties the writer declares, then those only
// the reader declares, sorted within each.
func (v view) propertyNames(r view) []string {
	var out []string
	for _, x := range []view{v, r} {
		var names []string
		for _, s := range x {
			for p := range s.Properties {
				if !slices.Contains(out, p) && !slices.Contains(names, p) {
					names = append(names, p)
				}
			}
		}
		slices.Sort(names)
		out = append(out, names...)
	}
	return out
}

// closed: the view rejects some property it does not declare.
func (v view) closed() bool {
	for _, s := range v {
		if s.AdditionalProperties != nil && s.AdditionalProperties != true {
			return true
		}
		if s.UnevaluatedProperties != nil && s.UnevaluatedProperties.Bool != nil && !*s.UnevaluatedProperties.Bool {
			return true
		}
	}
	return false
}

// closedTo: the view rejects property p outright (a conjunct with
// additionalProperties false that neither declares it nor matches it by
// pattern, or unevaluatedProperties false and no conjunct declares it).
func (v view) closedTo(p string) bool {
	declared := false
	for _, s := range v {
		if _, ok := s.Properties[p]; ok {
			declared = true
		}
	}
	for _, s := range v {
		if s.UnevaluatedProperties != nil && s.UnevaluatedProperties.Bool != nil && !*s.UnevaluatedProperties.Bool && !declared {
			return true
		}
		if s.AdditionalProperties != false {
			continue
		}
		if _, ok := s.Properties[p]; ok {
			continue
		}
		matched := false
		for re := range s.PatternProperties {
			matched = matched || re.MatchString(p)
		}
		if !matched {
			return true
		}
	}
	return false
}

// additional is the view's additionalProperties when it is a schema.
func (v view) additional() view {
	var ss []*jsonschema.Schema
	for _, s := range v {
		if as, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			ss = append(ss, as)
		}
	}
	if len(ss) == 0 {
		return nil
	}
	return viewOf(ss...)
}

// mayBeObject: the view allows an object.
func (v view) mayBeObject() bool {
	ts := v.types()
	return ts == nil || slices.Contains(ts, "object")
}
