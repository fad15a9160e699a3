package schema

import (
	"fmt"
	"strings"
	"unicode"
)

// propSet is the properties an object schema describes, merged from its
// own properties, its $ref, its allOf members and the object variants of
// its oneOf/anyOf.
type propSet struct {
	order  []string
	props  map[string]*propInfo
	closed bool // additionalProperties: false
	extra  bool // members beyond the properties are allowed
}

type propInfo struct {
	alts     []propAlt // one per place that defines the property
	required bool
}

type propAlt struct {
	n   *jvalue
	d   *jsonDoc
	ptr string
}

// collectProps gathers the properties of n, or returns nil when n is not
// an object (a member or variant is not one).
func (l *jsonLoader) collectProps(n *jvalue, d *jsonDoc, ptr string, depth int) *propSet {
	ps := &propSet{props: map[string]*propInfo{}}
	if !l.gather(ps, n, d, ptr, true, depth, map[*jvalue]bool{}) {
		return nil
	}
	return ps
}

func (ps *propSet) add(name string, alt propAlt) *propInfo {
	p, ok := ps.props[name]
	if !ok {
		p = &propInfo{}
		ps.props[name] = p
		ps.order = append(ps.order, name)
	}
	if alt.n != nil {
		p.alts = append(p.alts, alt)
	}
	return p
}

// gather merges the properties of n into ps. always says the properties
// are always present (not a variant's), so that required applies.
func (l *jsonLoader) gather(ps *propSet, n *jvalue, d *jsonDoc, ptr string, always bool, depth int, seen map[*jvalue]bool) bool {
	if n.kind == jBool {
		return n.b // true adds nothing; false is no object
	}
	if n.kind != jObject || depth > 32 {
		return false
	}
	if seen[n] {
		return true
	}
	seen[n] = true
	defer delete(seen, n)
	if ref, ok := n.getStr("$ref"); ok {
		m, md, mp, ok := l.resolveQuiet(ref, d)
		if !ok || !l.gather(ps, m, md, mp, always, depth+1, seen) {
			return false
		}
	}
	if types, _ := jsonTypes(n); len(types) > 0 && !(len(types) == 1 && types[0] == "object") {
		return false
	}
	if n.get("enum") != nil || n.get("const") != nil || n.get("items") != nil {
		return false
	}
	if props := n.get("properties"); props != nil && props.kind == jObject {
		for _, k := range props.keys {
			ps.add(k, propAlt{props.obj[k], d, ptr + "/properties/" + escapePointer(k)})
		}
	}
	if req := n.get("required"); req != nil && req.kind == jArray && always {
		for _, r := range req.arr {
			if r.kind == jString {
				ps.add(r.str, propAlt{}).required = true
			}
		}
	}
	if ap := n.get("additionalProperties"); ap != nil {
		if ap.kind == jBool && !ap.b {
			ps.closed = true
		} else {
			ps.extra = true
		}
	}
	if n.get("patternProperties") != nil {
		ps.extra = true
	}
	if all := n.get("allOf"); all != nil && all.kind == jArray {
		for i, m := range all.arr {
			if !l.gather(ps, m, d, fmt.Sprintf("%s/allOf/%d", ptr, i), always, depth+1, seen) {
				return false
			}
		}
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		arr := n.get(kw)
		if arr == nil || arr.kind != jArray {
			continue
		}
		for i, m := range arr.arr {
			if m.kind == jObject {
				if ts, null := jsonTypes(m); null && len(ts) == 0 {
					continue // the null variant adds no property
				}
			}
			if !l.gather(ps, m, d, fmt.Sprintf("%s/%s/%d", ptr, kw, i), false, depth+1, seen) {
				return false
			}
		}
	}
	return true
}

// fillStruct declares the fields of struct t from object schema n.
func (l *jsonLoader) fillStruct(t *Type, n *jvalue, d *jsonDoc, ptr string) {
	ps := l.collectProps(n, d, ptr, 0)
	t.Doc = schemaDoc(n)
	if len(t.Doc) == 0 {
		t.Doc = []string{fmt.Sprintf("%s is the object at %s in %s.", t.Name, ptr, d.path)}
	}
	if ps == nil {
		return
	}
	if ps.extra && !ps.closed {
		t.Doc = append(t.Doc, "Members other than the fields below are allowed by the schema but not kept by this type.")
	}
	l.b.jsonStructBusy[t] = true
	defer delete(l.b.jsonStructBusy, t)
	fields := newNamer()
	for _, name := range ps.order {
		p := ps.props[name]
		if len(p.alts) == 0 {
			continue // required but never described: nothing to hold it
		}
		if !validJSONTag(name) {
			l.fail(d, p.alts[0].ptr, "property name", fmt.Sprintf("property %q cannot be named in a Go struct tag (encoding/json accepts letters, digits, spaces and !#$%%&()*+-./:;<=>?@[]^_{|}~); rename the property", name))
			continue
		}
		fd := l.field(t, fields, name, p)
		t.Fields = append(t.Fields, fd)
	}
}

// field maps one property.
func (l *jsonLoader) field(t *Type, fields *namer, name string, p *propInfo) *Field {
	gn := fields.take(GoName(name))
	alt := p.alts[0]
	r := l.typeOf(alt.n, alt.d, alt.ptr, t.Name+gn)
	note := r.note
	for _, other := range p.alts[1:] {
		if other.n == alt.n || other.n.raw() == alt.n.raw() {
			continue
		}
		o := l.typeOf(other.n, other.d, other.ptr, t.Name+gn)
		if o.ref.String() != r.ref.String() {
			r = &jsonResult{ref: rawJSON()}
			note = "Its variants give it different types; kept raw."
			break
		}
		r = &jsonResult{ref: r.ref, nullable: r.nullable || o.nullable}
	}
	ref := r.ref
	required := p.required
	switch {
	case ref.Kind == Named && ref.Named.Kind == Struct && l.b.jsonStructBusy[ref.Named]:
		ref = pointer(ref) // a struct that holds itself: only by reference
	case (r.nullable || !required) && !ref.Nilable():
		ref = pointer(ref)
	}
	fd := &Field{
		GoName:   gn,
		WireName: name,
		Type:     ref,
		Doc:      schemaDoc(alt.n),
		Optional: !required,
		Tags:     Tags{JSON: true, OmitEmpty: !required},
	}
	if def := alt.n.get("default"); def != nil {
		fd.Default = def.raw()
		fd.Doc = append(fd.Doc, docLine("Default: "+truncate(fd.Default, 200)+"."))
	}
	if note != "" {
		fd.Doc = append(fd.Doc, DocLines(note)...)
	}
	return fd
}

// validJSONTag reports whether encoding/json accepts name in a tag.
func validJSONTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
