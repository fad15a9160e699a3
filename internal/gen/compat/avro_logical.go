package compat

import (
	"fmt"

	"github.com/hamba/avro/v2"
)

// logicalRule: Avro's resolution rules, and so hamba, ignore logical types
// (hamba/avro#38: the specification does not mention them), so
// timestamp-millis → timestamp-micros or a decimal's new scale resolves
// and every value changes meaning. acemq-gen walks the two schemas where
// hamba found them compatible and reports it.
//
//	logical-type-changed: both directions (the same bytes mean another value)
func (c *avroChecker) logicalRule(r, w avro.Schema) []finding {
	r, w = deref(r), deref(w)
	key := [2][32]byte{r.Fingerprint(), w.Fingerprint()}
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	if ru, ok := r.(*avro.UnionSchema); ok {
		var out []finding
		for _, b := range unionBranches(w) {
			if rb := sameBranch(ru, b); rb != nil {
				out = append(out, c.logicalRule(rb, b)...)
			}
		}
		return out
	}
	if wu, ok := w.(*avro.UnionSchema); ok {
		var out []finding
		for _, b := range wu.Types() {
			out = append(out, c.logicalRule(r, b)...)
		}
		return out
	}
	switch r := r.(type) {
	case *avro.RecordSchema:
		w, ok := w.(*avro.RecordSchema)
		if !ok {
			return nil
		}
		var out []finding
		for _, rf := range r.Fields() {
			if wf := writerField(w, rf); wf != nil {
				out = append(out, under(field(rf.Name()), c.logicalRule(rf.Type(), wf.Type()))...)
			}
		}
		return out
	case *avro.ArraySchema:
		if w, ok := w.(*avro.ArraySchema); ok {
			return under("[]", c.logicalRule(r.Items(), w.Items()))
		}
	case *avro.MapSchema:
		if w, ok := w.(*avro.MapSchema); ok {
			return under(".*", c.logicalRule(r.Values(), w.Values()))
		}
	}
	rl, wl := logicalOf(r), logicalOf(w)
	if rl == wl {
		return nil
	}
	old, new := oldNew(c.dir, rl, wl)
	return []finding{{rule: "logical-type-changed",
		detail: fmt.Sprintf("logical type was %s, is %s; Avro resolves the two, and every value changes meaning", old, new)}}
}

// logicalOf names a schema's logical type ("none" for none), with a
// decimal's precision and scale.
func logicalOf(s avro.Schema) string {
	ls, ok := s.(avro.LogicalTypeSchema)
	if !ok || ls.Logical() == nil {
		return "none"
	}
	if d, ok := ls.Logical().(*avro.DecimalLogicalSchema); ok {
		return fmt.Sprintf("decimal(%d,%d)", d.Precision(), d.Scale())
	}
	return string(ls.Logical().Type())
}

func unionBranches(s avro.Schema) []avro.Schema {
	if u, ok := s.(*avro.UnionSchema); ok {
		return u.Types()
	}
	return []avro.Schema{s}
}

// sameBranch is the reader union's branch of the writer's type and name.
func sameBranch(u *avro.UnionSchema, w avro.Schema) avro.Schema {
	w = deref(w)
	for _, b := range u.Types() {
		if b := deref(b); b.Type() == w.Type() && sameName(b, w) {
			return b
		}
	}
	return nil
}
