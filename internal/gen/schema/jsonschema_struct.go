package schema

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/oneline"
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
	n      *jvalue
	d      *jsonDoc
	ptr    string
	always bool // from the object itself or an allOf member, not a variant
}

// collectProps gathers the properties of n, or returns nil when n is not
// an object (a member or variant is not one).
func (l *jsonLoader) collectProps(n *jvalue, d *jsonDoc, ptr string, depth int) *propSet {
	ps := &propSet{props: map[string]*propInfo{}}
	if !l.gather(ps, n, d, ptr, true, depth, map[visit]bool{}) {
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
// visit is a schema seen while gathering, and how (variants add optional
// properties only). Each is merged once, so shared $refs cost nothing.
type visit struct {
	n      *jvalue
	always bool
}

func (l *jsonLoader) gather(ps *propSet, n *jvalue, d *jsonDoc, ptr string, always bool, depth int, seen map[visit]bool) bool {
	if n.kind == jBool {
		return n.b // true adds nothing; false is no object
	}
	if n.kind != jObject || depth > maxDepth {
		return false
	}
	if seen[visit{n, always}] {
		return true
	}
	seen[visit{n, always}] = true
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
			ps.add(k, propAlt{props.obj[k], d, ptr + "/properties/" + escapePointer(k), always})
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
		t.Doc = []string{fmt.Sprintf("%s is the object at %s in %s.", t.Name, oneline.Quote(ptr), oneline.Quote(d.path))}
	}
	if ps == nil {
		return
	}
	t.jsonSrc = &jsonSource{n: n, d: d, ps: ps, ptr: ptr}
	if n.get("oneOf") != nil || n.get("anyOf") != nil {
		t.Doc = append(t.Doc, "It holds the fields of every object variant of its oneOf/anyOf; the schema says which combinations are valid.")
	}
	if ps.extra && !ps.closed {
		t.Doc = append(t.Doc, "Members other than the fields below are allowed by the schema but not kept by this type.")
	}
	l.b.jsonStructBusy[t] = true
	defer delete(l.b.jsonStructBusy, t)
	fields := names.NewScope()
	siblings := map[string]string{}
	for _, name := range ps.order {
		siblings[name] = ptr + "/properties/" + escapePointer(name)
	}
	for _, name := range ps.order {
		p := ps.props[name]
		if len(p.alts) == 0 && ps.closed {
			continue // required, yet no member may exist: nothing to hold
		}
		if !validJSONTag(name) {
			where := ptr + "/required"
			if len(p.alts) > 0 {
				where = p.alts[0].ptr
			}
			l.fail(d, where, "property name", fmt.Sprintf("property %q cannot be named in a Go struct tag (encoding/json accepts letters, digits, spaces and !#$%%&()*+-./:;<=>?@[]^_{|}~); rename the property", name))
			continue
		}
		if len(p.alts) == 0 {
			// Required, but no schema describes it: any value.
			t.Fields = append(t.Fields, &Field{
				GoName: fields.Take(l.b.names.Ident(name)), WireName: name, Type: rawJSON(),
				Doc:  []string{"Required; the schema does not describe it, so it is kept raw."},
				Tags: Tags{JSON: true},
			})
			continue
		}
		fd := l.field(t, fields, name, p, d, siblings)
		t.Fields = append(t.Fields, fd)
	}
}

// field maps one property.
func (l *jsonLoader) field(t *Type, fields *names.Scope, name string, p *propInfo, d *jsonDoc, siblings map[string]string) *Field {
	in := l.in
	if d != l.doc {
		in = Input{} // field_go_names apply to the message's own file
	}
	gn := l.b.fieldName(in, fields, siblings[name], name, siblings)
	alts := p.alts
	for _, a := range alts {
		if a.always {
			// Every allOf member applies: the first definition is the type
			// (the others can only narrow it); variants merge only among
			// themselves.
			alts = []propAlt{a}
			break
		}
	}
	alt := alts[0]
	r, same := l.propType(t.Name+gn, alts)
	note := r.note
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
	if !same {
		fd.Doc = nil // the variants describe it differently
	}
	if def := alt.n.get("default"); def != nil && same {
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

// propType maps a property that one or more places (variants) define:
// identical schemas map once; string enums and consts merge into one enum;
// schemas of one scalar kind give that scalar; anything else stays raw.
func (l *jsonLoader) propType(hint string, alts []propAlt) (r *jsonResult, same bool) {
	first := alts[0]
	same = true
	for _, a := range alts[1:] {
		if a.n != first.n && a.n.raw() != first.n.raw() {
			same = false
			break
		}
	}
	if same {
		return l.typeOf(first.n, first.d, first.ptr, hint), true
	}
	if vals, null, ok := l.stringChoices(alts); ok {
		t := l.b.newType(Enum, first.d.path+" "+first.ptr, hint)
		t.Doc = schemaDoc(first.n)
		if len(t.Doc) == 0 {
			t.Doc = []string{fmt.Sprintf("%s is the values of %s in its variants.", t.Name, oneline.Quote(first.ptr))}
		}
		for _, v := range vals {
			t.Values = append(t.Values, &Symbol{GoName: l.b.constName(t, v, t.Name+l.b.names.EnumSymbol(v)), Value: v})
		}
		return &jsonResult{ref: named(t), nullable: null, note: "Its values across the variants."}, false
	}
	kind := ""
	for i, a := range alts {
		k := l.scalarKind(a.n, a.d, 0)
		if k == "" || (i > 0 && k != kind) {
			var alt []string
			for _, a := range alts {
				alt = append(alt, describe(a.n))
			}
			return &jsonResult{ref: rawJSON(), note: "Its variants give it different types (" + truncate(strings.Join(alt, "; "), 300) + "); kept raw."}, false
		}
		kind = k
	}
	return &jsonResult{ref: builtin(kind)}, false
}

// stringChoices returns the values of alternatives that are all string
// enums or string consts, in order, without duplicates.
func (l *jsonLoader) stringChoices(alts []propAlt) (vals []string, null, ok bool) {
	seen := map[string]bool{}
	for _, a := range alts {
		n, d := a.n, a.d
		if ref, isRef := n.getStr("$ref"); isRef {
			m, md, _, resolved := l.resolveQuiet(ref, d)
			if !resolved {
				return nil, false, false
			}
			n, d = m, md
		}
		var list []*jvalue
		if e := n.get("enum"); e != nil && e.kind == jArray {
			list = e.arr
		} else if c := n.get("const"); c != nil {
			list = []*jvalue{c}
		} else {
			return nil, false, false
		}
		for _, v := range list {
			switch v.kind {
			case jNull:
				null = true
			case jString:
				if !seen[v.str] {
					seen[v.str] = true
					vals = append(vals, v.str)
				}
			default:
				return nil, false, false
			}
		}
	}
	return vals, null, len(vals) > 0
}
