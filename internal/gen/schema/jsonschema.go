package schema

import (
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
)

// jsonDoc is one JSON Schema document, loaded from an input or from a
// file that a relative $ref names.
type jsonDoc struct {
	path string   // as written in the manifest, or as found (for errors)
	file string   // its name in the builder's fsys, for relative $refs
	id   *url.URL // the document's $id, if absolute
	// qual is the first word of the names of the types the document
	// defines ($defs/address of ShipmentRequested's schema:
	// ShipmentRequestedAddress): the Go name of the message whose schema
	// it is (of the first by Go name, when several share it), else the
	// file's name (common.json: Common).
	qual     string
	owned    bool   // qual is a message's
	owner    string // that message (Input.Message)
	fileQual string // the file's name, qual when no message owns it
	root     *jvalue
	invalid  bool // breaks its metaschema (reported): not mapped
}

// jsonResult is what a schema maps to in place.
type jsonResult struct {
	ref      *TypeRef
	nullable bool   // null is a valid value too
	note     string // said in the doc comment of the field that holds it
}

// jsonLoader maps the schemas of one input.
type jsonLoader struct {
	b   *builder
	in  Input
	doc *jsonDoc
}

// addJSONDoc parses and indexes a document by file and $id.
func (b *builder) addJSONDoc(path, file string, data []byte) (*jsonDoc, error) {
	if d, ok := b.jsonDocs["file:"+file]; ok {
		return d, nil
	}
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	d := &jsonDoc{path: path, file: file, root: root, qual: b.names.Ident(stem), fileQual: b.names.Ident(stem)}
	b.jsonDocs["file:"+file] = d
	if _, ok := b.sources[path]; !ok {
		b.sources[path] = source{root: root, data: data}
	}
	d.invalid = !b.checkMetaschema(d, data)
	if !d.invalid {
		d.invalid = !b.checkVocabulary(d)
	}
	if !d.invalid {
		b.staticDynamicRefs(d)
	}
	id, ok := root.getStr("$id")
	if !ok {
		id, ok = root.getStr("id") // draft 4
	}
	if ok {
		if u, err := url.Parse(id); err == nil && u.IsAbs() {
			u.Fragment = ""
			d.id = u
			if _, dup := b.jsonDocs[u.String()]; !dup {
				b.jsonDocs[u.String()] = d
			}
		}
	}
	return d, nil
}

// preloadJSON parses every JSON Schema input first, so that a $ref by $id
// finds a document whatever the order of the inputs.
func (b *builder) preloadJSON(inputs []Input) {
	for _, in := range inputs {
		if in.Format != JSONSchema {
			continue
		}
		d, err := b.addJSONDoc(in.Path, inputFile(in), in.Data)
		if err != nil {
			b.failJSON(in.Path, in.Data, err)
			continue
		}
		if !d.owned {
			d.qual, d.owned, d.owner = in.GoName, true, in.Message
		}
	}
}

func inputFile(in Input) string {
	return input.Join(in.Dir, path.Base(in.Path))
}

func (b *builder) loadJSON(in Input) {
	d, ok := b.jsonDocs["file:"+inputFile(in)]
	if !ok {
		return // reported by preloadJSON
	}
	if d.invalid {
		return // reported by checkMetaschema
	}
	l := &jsonLoader{b: b, in: in, doc: d}
	l.root(d)
}

// root maps the document root to the type named in.GoName.
func (l *jsonLoader) root(d *jsonDoc) {
	n := d.root
	hint := l.in.GoName
	if l.isStruct(n, d) {
		t := l.b.rootType(l.in, Struct, "#")
		r := named(t)
		l.b.jsonTypes[n] = &jsonResult{ref: r, nullable: l.nullable(n)}
		l.fillStruct(t, n, d, "#")
		return
	}
	t := l.b.rootType(l.in, Alias, "#")
	t.Doc = schemaDoc(n)
	res := l.typeOf(n, d, "#", hint+"Value")
	if res == nil {
		t.Target = rawJSON()
		t.GoAlias = true
		return
	}
	t.Target = res.ref
	if res.nullable && !t.Target.Nilable() {
		t.Target = pointer(t.Target)
	}
	t.GoAlias = needsGoAlias(t.Target)
}

// schemaDoc is the doc comment of a schema: its title and description.
func schemaDoc(n *jvalue) []string {
	var parts []string
	if s, ok := n.getStr("title"); ok && strings.TrimSpace(s) != "" {
		parts = append(parts, s)
	}
	if s, ok := n.getStr("description"); ok && strings.TrimSpace(s) != "" {
		if len(parts) > 0 {
			parts = append(parts, "")
		}
		parts = append(parts, s)
	}
	lines := DocLines(strings.Join(parts, "\n"))
	if dep := n.get("deprecated"); dep != nil && dep.kind == jBool && dep.b {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "Deprecated: the schema marks it deprecated.")
	}
	return lines
}

// jsonFail reports a problem at ptr in document d.
func (l *jsonLoader) fail(d *jsonDoc, ptr, construct, msg string) {
	l.b.fail(d.path, ptr, construct, msg)
}

// types returns the non-null names in "type", and whether null is one.
func jsonTypes(n *jvalue) (types []string, null bool) {
	t := n.get("type")
	if t == nil {
		return nil, false
	}
	switch t.kind {
	case jString:
		if t.str == "null" {
			return nil, true
		}
		return []string{t.str}, false
	case jArray:
		for _, e := range t.arr {
			if e.kind != jString {
				continue
			}
			if e.str == "null" {
				null = true
			} else if !slices.Contains(types, e.str) {
				types = append(types, e.str)
			}
		}
	}
	return types, null
}

// nullable says a schema admits null by its type or enum.
func (l *jsonLoader) nullable(n *jvalue) bool {
	if _, null := jsonTypes(n); null {
		return true
	}
	if e := n.get("enum"); e != nil && e.kind == jArray {
		for _, v := range e.arr {
			if v.kind == jNull {
				return true
			}
		}
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if arr := n.get(kw); arr != nil && arr.kind == jArray {
			for _, m := range arr.arr {
				if isNullSchema(m) {
					return true
				}
			}
		}
	}
	return false
}

// isNullSchema says a schema admits only null.
func isNullSchema(n *jvalue) bool {
	if n.kind != jObject || n.get("$ref") != nil {
		return false
	}
	ts, null := jsonTypes(n)
	return null && len(ts) == 0
}

// singleVariant says n's oneOf/anyOf has exactly one branch besides null.
func singleVariant(n *jvalue) bool {
	count := 0
	for _, kw := range []string{"oneOf", "anyOf"} {
		arr := n.get(kw)
		if arr == nil || arr.kind != jArray {
			continue
		}
		for _, m := range arr.arr {
			if !isNullSchema(m) {
				count++
			}
		}
	}
	return count == 1
}

// objectLike says a schema describes an object (by type or keywords).
func objectLike(n *jvalue) bool {
	types, _ := jsonTypes(n)
	if len(types) == 1 && types[0] == "object" {
		return true
	}
	if len(types) > 0 {
		return false
	}
	for _, k := range []string{"properties", "additionalProperties", "patternProperties", "required", "minProperties", "maxProperties", "propertyNames"} {
		if n.get(k) != nil {
			return true
		}
	}
	return false
}

// isStruct says a schema maps to a Go struct: an object with properties
// (its own, or merged from allOf / object variants of oneOf or anyOf).
func (l *jsonLoader) isStruct(n *jvalue, d *jsonDoc) bool {
	if n == nil || n.kind != jObject {
		return false
	}
	if n.get("$ref") != nil && !hasShape(n, "$ref") {
		return false
	}
	if !objectLike(n) && !hasCombinator(n) {
		return false
	}
	if n.get("properties") == nil && n.get("allOf") == nil && singleVariant(n) {
		return false // {"anyOf": [X, {"type": "null"}]} is a nullable X
	}
	props := l.collectProps(n, d, "#", 0)
	return props != nil && (len(props.order) > 0 || props.closed && !props.extra)
}

func hasCombinator(n *jvalue) bool {
	return n.get("allOf") != nil || n.get("oneOf") != nil || n.get("anyOf") != nil
}

// hasShape says n has keywords that shape a value, besides skip.
func hasShape(n *jvalue, skip string) bool {
	for _, k := range n.keys {
		if k != skip && shapeKeywords[k] {
			return true
		}
	}
	return false
}

var shapeKeywords = map[string]bool{
	"type": true, "properties": true, "additionalProperties": true, "patternProperties": true,
	"items": true, "prefixItems": true, "enum": true, "const": true, "allOf": true, "oneOf": true,
	"anyOf": true, "$ref": true, "required": true, "format": true,
}
