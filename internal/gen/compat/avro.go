package compat

import (
	"fmt"
	"slices"

	"github.com/hamba/avro/v2"
)

// CheckAvro compares two Avro schemas in the directions of mode. The
// verdict is hamba/avro's SchemaCompatibility (Avro's resolution rules:
// can a reader of one schema decode data written with the other?); when
// it refuses, the two schemas are walked to name where and why.
func CheckAvro(message, oldText, newText string, mode Mode) ([]Problem, error) {
	// Each schema gets a cache of its own: the old and the new version of a
	// record have the same name, and the default cache would keep the first.
	oldS, err := avro.ParseWithCache(oldText, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("the previous schema: %w", err)
	}
	newS, err := avro.ParseWithCache(newText, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("the new schema: %w", err)
	}
	var out []Problem
	for _, d := range mode.directions() {
		r, w := newS, oldS
		if d == Forward {
			r, w = oldS, newS
		}
		c := &avroChecker{dir: d, sc: avro.NewSchemaCompatibility(), seen: map[[2][32]byte]bool{}}
		err := c.sc.Compatible(r, w)
		if err == nil {
			out = append(out, place(message, d, c.logicalRule(r, w))...)
			continue
		}
		fs := c.where(r, w)
		if len(fs) == 0 {
			fs = []finding{{rule: "incompatible", detail: err.Error()}}
		}
		out = append(out, place(message, d, fs)...)
	}
	return out, nil
}

// avroChecker finds where a reader schema cannot read a writer's, in one
// direction, following hamba's rules and asking hamba at each step.
type avroChecker struct {
	dir  Direction
	sc   *avro.SchemaCompatibility
	seen map[[2][32]byte]bool
}

// where lists the findings of a pair hamba refuses.
func (c *avroChecker) where(r, w avro.Schema) []finding {
	r, w = deref(r), deref(w)
	key := [2][32]byte{r.Fingerprint(), w.Fingerprint()}
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	if r.Type() != w.Type() {
		return c.mismatch(r, w)
	}
	switch r := r.(type) {
	case *avro.ArraySchema:
		return under("[]", c.where(r.Items(), w.(*avro.ArraySchema).Items()))
	case *avro.MapSchema:
		return under(".*", c.where(r.Values(), w.(*avro.MapSchema).Values()))
	case *avro.FixedSchema:
		w := w.(*avro.FixedSchema)
		if f := c.name(r, w); f != nil {
			return f
		}
		if r.Size() != w.Size() {
			old, new := oldNew(c.dir, r.Size(), w.Size())
			return []finding{{rule: "fixed-size-changed", detail: fmt.Sprintf("fixed %s was %d bytes, is %d", r.FullName(), old, new)}}
		}
	case *avro.EnumSchema:
		return c.enum(r, w.(*avro.EnumSchema))
	case *avro.RecordSchema:
		return c.record(r, w.(*avro.RecordSchema))
	case *avro.UnionSchema:
		var out []finding
		for _, b := range w.(*avro.UnionSchema).Types() {
			if c.sc.Compatible(r, b) != nil {
				out = append(out, c.mismatch(r, b)...)
			}
		}
		return out
	}
	return nil
}

// mismatch is a reader and a writer of different types: a writer union
// must have every branch read, a reader union must read the writer by one
// branch, other types must be promotable (int → long, float or double;
// long → float or double; float → double; string ↔ bytes).
//
//	union-branch-removed (backward): the new union lacks a type old messages may carry
//	union-branch-added (forward): the new union has a type old readers lack
//	type-changed: a type that Avro cannot promote
func (c *avroChecker) mismatch(r, w avro.Schema) []finding {
	r, w = deref(r), deref(w)
	if wu, ok := w.(*avro.UnionSchema); ok {
		var out []finding
		for _, b := range wu.Types() {
			if c.sc.Compatible(r, b) == nil {
				continue
			}
			if _, union := r.(*avro.UnionSchema); !union && deref(b).Type() != r.Type() {
				out = append(out, finding{rule: named(c.dir, "union-branch-removed", "union-branch-added"),
					detail: fmt.Sprintf(named(c.dir, "the new schema has no %s, which old messages may carry", "the new schema writes %s, which old readers have no branch for"), typeName(b))})
				continue
			}
			out = append(out, c.mismatch(r, b)...)
		}
		return out
	}
	if ru, ok := r.(*avro.UnionSchema); ok {
		// Same type, same name: the branch it was meant for; look inside.
		for _, b := range ru.Types() {
			if b := deref(b); b.Type() == w.Type() && sameName(b, w) {
				return c.where(b, w)
			}
		}
		return []finding{{rule: named(c.dir, "union-branch-removed", "union-branch-added"),
			detail: fmt.Sprintf(named(c.dir, "the new union has no branch for %s, which old messages may carry", "the new schema writes %s, which the old union has no branch for"), typeName(w))}}
	}
	if r.Type() == w.Type() {
		return c.where(r, w)
	}
	old, new := oldNew(c.dir, typeName(r), typeName(w))
	return []finding{{rule: "type-changed", detail: fmt.Sprintf("type was %s, is %s; Avro does not read %s as %s", old, new, typeName(w), typeName(r))}}
}

// record: each reader field must be a writer field (by name or the
// reader's aliases) or have a default.
//
//	field-added-without-default (backward): old messages lack it and the new reader has no default
//	field-removed-without-default (forward): new messages lack it and the old reader has no default
func (c *avroChecker) record(r, w *avro.RecordSchema) []finding {
	if f := c.name(r, w); f != nil {
		return f
	}
	var out []finding
	for _, rf := range r.Fields() {
		wf := writerField(w, rf)
		if wf == nil {
			if !rf.HasDefault() {
				out = append(out, finding{path: field(rf.Name()), rule: named(c.dir, "field-added-without-default", "field-removed-without-default"),
					detail: named(c.dir, "old messages lack it; give it a default", "new messages lack it and the old schema has no default for it")})
			}
			continue
		}
		if c.sc.Compatible(rf.Type(), wf.Type()) != nil {
			out = append(out, under(field(rf.Name()), c.where(rf.Type(), wf.Type()))...)
		}
	}
	return out
}

func writerField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, f := range w.Fields() {
		if f.Name() == rf.Name() || slices.Contains(rf.Aliases(), f.Name()) {
			return f
		}
	}
	return nil
}

// enum: each symbol the writer has must be the reader's, unless the
// reader's enum has a default.
//
//	enum-symbol-removed (backward): old messages may carry it
//	enum-symbol-added (forward): old readers have no such symbol and no default
func (c *avroChecker) enum(r, w *avro.EnumSchema) []finding {
	if f := c.name(r, w); f != nil {
		return f
	}
	if r.HasDefault() {
		return nil
	}
	var out []finding
	for _, s := range w.Symbols() {
		if !slices.Contains(r.Symbols(), s) {
			out = append(out, finding{rule: named(c.dir, "enum-symbol-removed", "enum-symbol-added"),
				detail: fmt.Sprintf(named(c.dir, "%s was removed from %s; old messages may carry it", "%s was added to %s; old readers have no default for it"), s, r.FullName())})
		}
	}
	return out
}

// name: named types must keep their name (or the reader must alias the
// writer's).
//
//	name-changed: a record, enum or fixed renamed without an alias
func (c *avroChecker) name(r, w avro.NamedSchema) []finding {
	if r.Name() == w.Name() || slices.Contains(r.Aliases(), w.FullName()) {
		return nil
	}
	old, new := oldNew(c.dir, r.FullName(), w.FullName())
	return []finding{{rule: "name-changed", detail: fmt.Sprintf("%s was %s, is %s; add the old name to aliases", w.Type(), old, new)}}
}

func sameName(a, b avro.Schema) bool {
	an, aok := a.(avro.NamedSchema)
	bn, bok := b.(avro.NamedSchema)
	return !aok || !bok || an.Name() == bn.Name()
}

func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

func typeName(s avro.Schema) string {
	s = deref(s)
	if n, ok := s.(avro.NamedSchema); ok {
		return fmt.Sprintf("%s %s", s.Type(), n.FullName())
	}
	return string(s.Type())
}
