package schema

import (
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/oneline"
)

// typeOf maps a schema in place. hint names the type, should the schema
// need a named one. It never returns nil: what cannot map is reported and
// carried as json.RawMessage so that the walk can go on and report more.
// Each schema is mapped once: a schema met again (through another $ref)
// gets the same Go type, and a document whose $refs share subschemas
// costs time in its size, not in the number of paths through it.
func (l *jsonLoader) typeOf(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	if r, ok := l.b.jsonTypes[n]; ok {
		return r
	}
	if l.b.jsonBusy[n] {
		return &jsonResult{ref: rawJSON(), note: "Refers back to an enclosing schema that is not an object; kept raw."}
	}
	r := l.mapSchema(n, d, ptr, hint)
	if _, ok := l.b.jsonTypes[n]; !ok {
		l.b.jsonTypes[n] = r
	}
	return r
}

// mapSchema maps a schema not mapped yet.
func (l *jsonLoader) mapSchema(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	if n.kind == jBool {
		note := "Any JSON value (the schema is true), kept raw."
		if !n.b {
			note = "No value is valid here (the schema is false)."
		}
		return &jsonResult{ref: rawJSON(), note: note}
	}
	if n.kind != jObject {
		l.fail(d, ptr, "schema", "a schema must be a JSON object or a boolean")
		return &jsonResult{ref: rawJSON()}
	}
	l.b.jsonBusy[n] = true
	defer delete(l.b.jsonBusy, n)

	if ref, ok := n.getStr("$ref"); ok && !hasShape(n, "$ref") {
		return l.refType(n, ref, d, ptr, hint)
	}
	if l.isStruct(n, d) {
		t := l.b.newType(Struct, d.path+" "+ptr, hint)
		r := &jsonResult{ref: named(t), nullable: l.nullable(n)}
		l.b.jsonTypes[n] = r
		l.fillStruct(t, n, d, ptr)
		return r
	}
	types, null := jsonTypes(n)
	if len(types) == 0 && n.get("enum") == nil && n.get("const") == nil && hasCombinator(n) {
		r := l.combined(n, d, ptr, hint)
		return r.orNull(null)
	}
	if e := n.get("enum"); e != nil && e.kind == jArray {
		return l.enumType(n, e, d, ptr, hint)
	}
	if c := n.get("const"); c != nil {
		r := scalarOf(c)
		r.note = "Always " + truncate(c.raw(), 200) + "."
		return r
	}
	if len(types) == 0 {
		if n.get("items") != nil || n.get("prefixItems") != nil {
			types = []string{"array"}
		} else if objectLike(n) {
			types = []string{"object"}
		}
	}
	return l.typed(n, types, d, ptr, hint).orNull(null)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// refType maps a $ref that has no siblings shaping the value.
func (l *jsonLoader) refType(n *jvalue, ref string, d *jsonDoc, ptr, hint string) *jsonResult {
	target, td, tptr, ok := l.resolve(ref, d, ptr+"/$ref")
	if !ok {
		return &jsonResult{ref: rawJSON(), note: "Unresolved $ref " + ref + "."}
	}
	if td != d && td.owned && td.qual != td.fileQual {
		// What the $ref reaches would be named after the message, and
		// renamed when a message that has this file is added or removed.
		l.fail(d, ptr+"/$ref", "$ref", fmt.Sprintf("%s is the schema of message %q, whose Go name %s is not the file's name %s, so the types this $ref reaches "+
			"would change names as messages with that file come and go; give message %q go_name: %s, or $ref a file that is no message's schema",
			oneline.Quote(td.path), td.owner, td.qual, td.fileQual, td.owner, td.fileQual))
	}
	if r, ok := l.b.jsonTypes[target]; ok {
		return r
	}
	if l.refLoop(n, target, td) {
		l.fail(d, ptr+"/$ref", "$ref", fmt.Sprintf("$ref %q starts a chain of $refs that comes back to %s: no schema along it says what the value is, "+
			"and the runtime refuses every value (reference cycle); make one of them a schema of its own (type, properties...)", ref, oneline.Quote(ptr)))
		return &jsonResult{ref: rawJSON()}
	}
	// A type defined under a key ($defs/address) is named by its
	// document and the key, whatever refers to it, so that no other
	// message, and no order of messages, changes its name; the root of a
	// document that is no message's schema is named by its file.
	name := hint
	if tptr == "#" && !td.owned {
		name = td.qual
	} else if i := strings.LastIndex(tptr, "/"); i >= 0 && tptr != "#" {
		tok := strings.NewReplacer("~1", "/", "~0", "~").Replace(tptr[i+1:])
		if tok != "items" && tok != "additionalProperties" && !isIndex(tok) {
			name = td.qual + l.b.names.Ident(tok)
		}
	}
	return l.typeOf(target, td, tptr, name)
}

// refLoop reports whether following $ref from start (whose $ref resolved
// to target in td) comes back to start: each schema along the chain only
// refers on, so validating one applies the next to the same value, for
// ever. A chain that reaches a loop not through start is reported at the
// loop's own schemas.
func (l *jsonLoader) refLoop(start, target *jvalue, td *jsonDoc) bool {
	seen := map[*jvalue]bool{}
	for cur, cd := target, td; cur != nil && !seen[cur]; {
		if cur == start {
			return true
		}
		seen[cur] = true
		ref, ok := cur.getStr("$ref")
		if !ok {
			return false
		}
		next, nd, _, ok := l.resolveQuiet(ref, cd)
		if !ok {
			return false
		}
		cur, cd = next, nd
	}
	return false
}

func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// typed maps a schema by its "type".
func (l *jsonLoader) typed(n *jvalue, types []string, d *jsonDoc, ptr, hint string) *jsonResult {
	switch {
	case len(types) == 0:
		if _, null := jsonTypes(n); null {
			return &jsonResult{ref: rawJSON(), nullable: true, note: "Always null."}
		}
		return &jsonResult{ref: rawJSON(), note: "Any JSON value, kept raw."}
	case len(types) == 2 && contains(types, "integer") && contains(types, "number"):
		return &jsonResult{ref: builtin("float64")}
	case len(types) > 1:
		return &jsonResult{ref: rawJSON(), note: "One of the JSON types " + strings.Join(types, ", ") + ", kept raw."}
	}
	switch types[0] {
	case "object":
		if n.get("additionalProperties") == nil && n.get("patternProperties") == nil && hasCombinator(n) {
			if r := l.combined(n, d, ptr, hint); r.ref.String() != rawJSON().String() {
				return r
			}
		}
		return l.mapType(n, d, ptr, hint)
	case "array":
		return l.arrayType(n, d, ptr, hint)
	case "string":
		if f, _ := n.getStr("format"); f == "date-time" {
			return &jsonResult{ref: timeTime()}
		}
		return &jsonResult{ref: builtin("string")}
	case "integer":
		return &jsonResult{ref: builtin("int64")}
	case "number":
		return &jsonResult{ref: builtin("float64")}
	case "boolean":
		return &jsonResult{ref: builtin("bool")}
	}
	l.fail(d, ptr+"/type", "type", fmt.Sprintf("unknown type %q; use one of object, array, string, integer, number, boolean, null", types[0]))
	return &jsonResult{ref: rawJSON()}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// elem maps an item or map value: a nullable one becomes a pointer.
func (l *jsonLoader) elem(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	r := l.typeOf(n, d, ptr, hint)
	out := &jsonResult{ref: r.ref}
	if r.note != "" {
		out.note = "Each element or value: " + r.note
	}
	if r.nullable && !r.ref.Nilable() {
		out.ref = pointer(r.ref)
	}
	return out
}

// mapType maps an object without properties: additionalProperties or a
// single patternProperties schema gives the values, else they stay raw.
func (l *jsonLoader) mapType(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	if ap := n.get("additionalProperties"); ap != nil && !(ap.kind == jBool) {
		e := l.elem(ap, d, ptr+"/additionalProperties", hint+"Value")
		return &jsonResult{ref: mapOf(e.ref), note: e.note}
	}
	if pp := n.get("patternProperties"); pp != nil && pp.kind == jObject && len(pp.keys) == 1 {
		k := pp.keys[0]
		e := l.elem(pp.obj[k], d, ptr+"/patternProperties/"+escapePointer(k), hint+"Value")
		return &jsonResult{ref: mapOf(e.ref), note: e.note}
	}
	return &jsonResult{ref: mapOf(rawJSON()), note: "An object whose members are kept raw."}
}

// arrayType maps an array: items gives the elements; a tuple stays raw.
func (l *jsonLoader) arrayType(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	items := n.get("items")
	if n.get("prefixItems") != nil || (items != nil && items.kind == jArray) {
		return &jsonResult{ref: slice(rawJSON()), note: "A tuple; its elements are kept raw."}
	}
	if items == nil {
		return &jsonResult{ref: slice(rawJSON()), note: "Its elements are kept raw."}
	}
	e := l.elem(items, d, ptr+"/items", hint+"Item")
	return &jsonResult{ref: slice(e.ref), note: e.note}
}

// scalarOf maps a const or enum value to the Go type of its kind.
func scalarOf(v *jvalue) *jsonResult {
	switch v.kind {
	case jString:
		return &jsonResult{ref: builtin("string")}
	case jBool:
		return &jsonResult{ref: builtin("bool")}
	case jNumber:
		if _, err := v.num.Int64(); err == nil {
			return &jsonResult{ref: builtin("int64")}
		}
		return &jsonResult{ref: builtin("float64")}
	case jNull:
		return &jsonResult{ref: rawJSON(), nullable: true}
	}
	return &jsonResult{ref: rawJSON()}
}

// enumType maps an enum: strings give a named string type with one
// constant per value; numbers or booleans their scalar type; a mix stays
// raw.
func (l *jsonLoader) enumType(n, e *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	var kinds = map[string]bool{}
	null := l.nullable(n)
	var vals []*jvalue
	for _, v := range e.arr {
		if v.kind == jNull {
			null = true
			continue
		}
		vals = append(vals, v)
		kinds[scalarOf(v).ref.String()] = true
	}
	if kinds["int64"] && kinds["float64"] {
		delete(kinds, "int64")
	}
	list := make([]string, 0, len(vals))
	for _, v := range vals {
		list = append(list, v.raw())
	}
	note := "One of " + truncate(strings.Join(list, ", "), 300) + "."
	switch {
	case len(kinds) == 0:
		return &jsonResult{ref: rawJSON(), nullable: true, note: "Always null."}
	case len(kinds) > 1:
		return &jsonResult{ref: rawJSON(), nullable: null, note: note + " Kept raw: the values are of different kinds."}
	case !kinds["string"]:
		r := scalarOf(vals[0])
		if kinds["float64"] {
			r = &jsonResult{ref: builtin("float64")}
		}
		r.nullable, r.note = null, note
		return r
	}
	t := l.b.newType(Enum, d.path+" "+ptr, hint)
	t.Doc = schemaDoc(n)
	if len(t.Doc) == 0 {
		t.Doc = []string{fmt.Sprintf("%s is the enum at %s in %s.", t.Name, oneline.Quote(ptr), oneline.Quote(d.path))}
	}
	seen := map[string]bool{}
	for _, v := range vals {
		if seen[v.str] {
			continue
		}
		seen[v.str] = true
		t.Values = append(t.Values, &Symbol{GoName: l.b.constName(t, v.str, t.Name+l.b.names.EnumSymbol(v.str)), Value: v.str})
	}
	r := &jsonResult{ref: named(t), nullable: null}
	l.b.jsonTypes[n] = r
	return r
}

// combined maps allOf/oneOf/anyOf that do not describe an object: a single
// shaped member is that member; members that are all the same scalar are
// that scalar; anything else stays raw, documented.
func (l *jsonLoader) combined(n *jvalue, d *jsonDoc, ptr, hint string) *jsonResult {
	type member struct {
		n   *jvalue
		d   *jsonDoc
		ptr string
	}
	var members []member
	null := false
	seen := map[string]bool{} // identical members count once
	for _, kw := range []string{"allOf", "oneOf", "anyOf"} {
		arr := n.get(kw)
		if arr == nil || arr.kind != jArray {
			continue
		}
		for i, m := range arr.arr {
			mp := fmt.Sprintf("%s/%s/%d", ptr, kw, i)
			if m.kind == jObject && !hasShape(m, "") {
				continue // constraints only
			}
			if m.kind == jObject {
				if ts, nl := jsonTypes(m); nl && len(ts) == 0 && m.get("$ref") == nil {
					null = true
					continue
				}
			}
			if raw := m.raw(); !seen[raw] {
				seen[raw] = true
				members = append(members, member{m, d, mp})
			}
		}
	}
	if len(members) == 1 {
		m := members[0]
		r := l.typeOf(m.n, m.d, m.ptr, hint)
		if null && !r.nullable {
			r = &jsonResult{ref: r.ref, nullable: true, note: r.note}
		}
		return r
	}
	kinds := map[string]bool{}
	for _, m := range members {
		kinds[l.scalarKind(m.n, m.d, 0)] = true
	}
	if len(kinds) == 1 && !kinds[""] {
		for k := range kinds {
			return &jsonResult{ref: builtin(k), nullable: null}
		}
	}
	if len(kinds) == 2 && kinds["int64"] && kinds["float64"] {
		return &jsonResult{ref: builtin("float64"), nullable: null}
	}
	var alts []string
	for _, m := range members {
		alts = append(alts, describe(m.n))
	}
	return &jsonResult{ref: rawJSON(), nullable: null, note: "One of: " + truncate(strings.Join(alts, "; "), 300) + ". Kept raw: decode it once you know which."}
}

// scalarKind is the Go scalar a schema is (following $refs), or "".
func (l *jsonLoader) scalarKind(n *jvalue, d *jsonDoc, depth int) string {
	if depth > maxDepth || n.kind != jObject {
		return ""
	}
	if ref, ok := n.getStr("$ref"); ok {
		m, md, _, ok := l.resolveQuiet(ref, d)
		if !ok {
			return ""
		}
		return l.scalarKind(m, md, depth+1)
	}
	types, _ := jsonTypes(n)
	if len(types) == 0 {
		if e := n.get("enum"); e != nil && e.kind == jArray && len(e.arr) > 0 {
			return scalarOf(e.arr[0]).ref.String()
		}
		if c := n.get("const"); c != nil {
			return scalarOf(c).ref.String()
		}
		return ""
	}
	if len(types) != 1 {
		return ""
	}
	switch types[0] {
	case "string":
		return "string"
	case "integer":
		return "int64"
	case "number":
		return "float64"
	case "boolean":
		return "bool"
	}
	return ""
}

// resolveQuiet resolves a $ref without reporting (the walk reports it).
func (l *jsonLoader) resolveQuiet(ref string, d *jsonDoc) (*jvalue, *jsonDoc, string, bool) {
	n := len(l.b.errs)
	m, md, p, ok := l.resolve(ref, d, "#")
	l.b.errs = l.b.errs[:n]
	return m, md, p, ok
}

// describe names a schema briefly, for doc comments.
func describe(n *jvalue) string {
	if n.kind == jBool {
		return fmt.Sprint(n.b)
	}
	if r, ok := n.getStr("$ref"); ok {
		return r
	}
	if t, ok := n.getStr("title"); ok {
		return t
	}
	if types, _ := jsonTypes(n); len(types) > 0 {
		return strings.Join(types, " or ")
	}
	if n.get("properties") != nil {
		return "object"
	}
	return "schema"
}

// orNull returns r, admitting null too when null is set. Results are
// shared (each schema is mapped once), so it copies rather than changes r.
func (r *jsonResult) orNull(null bool) *jsonResult {
	if !null || r.nullable {
		return r
	}
	return &jsonResult{ref: r.ref, nullable: true, note: r.note}
}
