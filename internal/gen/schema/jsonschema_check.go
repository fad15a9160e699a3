package schema

import (
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
)

// JSONStructCheck is what a generated check verifies of a struct mapped
// from a JSON Schema object: one FieldCheck per field, on the value as
// encoding/json writes it. A struct has one only when every keyword of its
// schema, and of every schema it reaches, is one the check can verify
// exactly as the reference validator does (jsonCheckable); otherwise the
// message's schema is left to the reference alone.
type JSONStructCheck struct {
	Fields []*JSONFieldCheck
	Closed bool // additionalProperties: false (a decoded body may have others)
}

// JSONFieldCheck checks one field.
type JSONFieldCheck struct {
	Field *Field
	Value *JSONValueCheck
}

// JSONValueCheck is what is checked of one JSON value. The Go type holding
// it already says its JSON type (the check is planned only when it does);
// what remains is null, and the keywords below.
type JSONValueCheck struct {
	Null   bool  // null is valid here
	Struct *Type // an object: call its check
	Enum   []string
	// MinLength and MaxLength count runes, -1 when absent.
	MinLength, MaxLength int
	Pattern              string // RE2, as the reference compiles it
	Format               string // a format the reference asserts
	// Bounds, as Go literals of the field's type (an int64 field's bounds
	// are made inclusive integers), "" when absent.
	Minimum, Maximum, ExclusiveMinimum, ExclusiveMaximum string
	MultipleOf                                           int64 // int64 fields, 0 when absent
	MinItems, MaxItems                                   int   // -1 when absent
	Items, Values                                        *JSONValueCheck
	// NullBranch: the schema is anyOf/oneOf of a schema and {"type":
	// "null"}; the reference then reports any violation of the value at
	// the value's own location too (the null branch's), and so does the
	// check.
	NullBranch bool
}

// jsonSource is where a struct came from, for planning its check.
type jsonSource struct {
	n   *jvalue
	d   *jsonDoc
	ps  *propSet
	ptr string
}

// jsonAnnotations are keywords that never make a value invalid for the
// reference validator; any keyword in jsonAsserting but not handled by the
// planner sends the schema to the reference.
var jsonAsserting = map[string]bool{
	"type": true, "enum": true, "const": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true,
	"items": true, "prefixItems": true, "additionalItems": true, "unevaluatedItems": true, "contains": true,
	"minContains": true, "maxContains": true, "maxItems": true, "minItems": true, "uniqueItems": true,
	"maxProperties": true, "minProperties": true, "required": true, "properties": true,
	"patternProperties": true, "additionalProperties": true, "unevaluatedProperties": true,
	"propertyNames": true, "dependencies": true, "dependentRequired": true, "dependentSchemas": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"format": true, "$ref": true, "$dynamicRef": true, "$recursiveRef": true, "$dynamicAnchor": true,
	"$recursiveAnchor": true, "contentSchema": true, "contentEncoding": true, "contentMediaType": true,
}

// JSONCheckFormats are the formats a generated check asserts, with the
// reference validator's own functions (acemqimpl.JSONFormat).
var JSONCheckFormats = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference",
	"iri-reference", "uri-template", "semver",
}

// planJSONChecks gives every JSON struct whose schema the generated code
// can check exactly a JSONCheck; a struct that reaches one that cannot has
// none either.
func (b *builder) planJSONChecks() {
	l := &jsonLoader{b: b}
	var structs []*Type
	for _, t := range b.u.Types {
		if t.jsonSrc != nil {
			t.JSONCheck = l.planStruct(t)
			structs = append(structs, t)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, t := range structs {
			if t.JSONCheck != nil && !t.JSONCheck.reachesOnlyChecked() {
				t.JSONCheck = nil
				changed = true
			}
		}
	}
}

func (c *JSONStructCheck) reachesOnlyChecked() bool {
	for _, f := range c.Fields {
		if !f.Value.reachesOnlyChecked() {
			return false
		}
	}
	return true
}

func (v *JSONValueCheck) reachesOnlyChecked() bool {
	switch {
	case v == nil:
		return true
	case v.Struct != nil && v.Struct.JSONCheck == nil:
		return false
	}
	return v.Items.reachesOnlyChecked() && v.Values.reachesOnlyChecked()
}

// onlyKeywords says every asserting keyword of n is in ok.
func onlyKeywords(n *jvalue, ok ...string) bool {
	for _, k := range n.keys {
		if jsonAsserting[k] && !slices.Contains(ok, k) {
			return false
		}
	}
	return true
}

// planStruct plans the check of struct t, or returns nil.
func (l *jsonLoader) planStruct(t *Type) *JSONStructCheck {
	src := t.jsonSrc
	n, ps := src.n, src.ps
	if ps == nil || !onlyKeywords(n, "type", "properties", "required", "additionalProperties") {
		return nil
	}
	if types, _ := jsonTypes(n); n.get("type") != nil && !slices.Equal(types, []string{"object"}) {
		return nil
	}
	if ap := n.get("additionalProperties"); ap != nil && ap.kind != jBool {
		return nil
	}
	if props := n.get("properties"); props != nil && props.kind != jObject {
		return nil
	}
	if req := n.get("required"); req != nil && req.kind != jArray {
		return nil
	}
	fields := map[string]*Field{}
	for _, f := range t.Fields {
		fields[f.WireName] = f
	}
	c := &JSONStructCheck{Closed: ps.closed}
	for _, name := range ps.order {
		p := ps.props[name]
		f := fields[name]
		if f == nil || len(p.alts) > 1 || p.required == f.Optional {
			return nil
		}
		var v *JSONValueCheck
		if len(p.alts) == 0 {
			v = anyValue(f.Type)
		} else {
			v = l.planValue(p.alts[0].n, p.alts[0].d, f.Type, 0)
		}
		if v == nil {
			return nil
		}
		c.Fields = append(c.Fields, &JSONFieldCheck{Field: f, Value: v})
	}
	if len(c.Fields) != len(t.Fields) {
		return nil
	}
	return c
}

func newValueCheck() *JSONValueCheck {
	return &JSONValueCheck{MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1}
}

// anyValue is the check of a value any JSON value may be: a raw field.
func anyValue(r *TypeRef) *JSONValueCheck {
	if r.Kind != Qual || r.Name != "RawMessage" {
		return nil
	}
	v := newValueCheck()
	v.Null = true
	return v
}

// planValue plans the check of the value of schema n held in Go type r,
// or returns nil when it cannot be checked exactly.
func (l *jsonLoader) planValue(n *jvalue, d *jsonDoc, r *TypeRef, depth int) *JSONValueCheck {
	if depth > maxDepth {
		return nil
	}
	if n.kind == jBool {
		if n.b {
			return anyValue(derefRaw(r))
		}
		return nil
	}
	if n.kind != jObject {
		return nil
	}
	if ref, ok := n.getStr("$ref"); ok {
		if !onlyKeywords(n, "$ref") {
			return nil
		}
		m, md, _, ok := l.resolveQuiet(ref, d)
		if !ok {
			return nil
		}
		return l.planValue(m, md, r, depth+1)
	}
	if x, ok := nullBranchOf(n); ok {
		// A value of x, or null: x must refuse null itself, so that
		// oneOf's "exactly one" is anyOf's "at least one".
		if r.Kind != Pointer && !r.Nilable() || !l.refusesNull(x, d, 0) {
			return nil
		}
		inner := l.planValue(x, d, r, depth+1)
		if inner == nil || inner.Null {
			return nil
		}
		w := *inner
		w.Null, w.NullBranch = true, true
		return &w
	}
	types, null := jsonTypes(n)
	if tv := n.get("type"); tv != nil && tv.kind != jString && tv.kind != jArray {
		return nil
	}
	elem := r
	if r.Kind == Pointer {
		elem = r.Elem
	}
	v := newValueCheck()
	v.Null = null
	switch {
	case elem.Kind == Named && elem.Named.Kind == Struct:
		if elem.Named.jsonSrc == nil || elem.Named.jsonSrc.n != n || !slices.Equal(types, []string{"object"}) && len(types) > 0 {
			return nil
		}
		v.Struct = elem.Named
		if n.get("type") == nil {
			v.Null = true // properties, required... apply to objects only
		}
		return v
	case elem.Kind == Named && elem.Named.Kind == Enum, elem.Kind == Builtin && elem.Name == "string":
		if !stringTyped(types, n) || !l.planString(n, v) {
			return nil
		}
		if elem.Kind == Named && v.Enum == nil {
			return nil
		}
		return v
	case elem.Kind == Qual && elem.Pkg == "time" && elem.Name == "Time":
		// encoding/json writes RFC 3339 with nanoseconds, which is always
		// a date-time (a year it cannot write is its error).
		if !slices.Equal(types, []string{"string"}) || !onlyKeywords(n, "type", "format") {
			return nil
		}
		if f, _ := n.getStr("format"); f != "date-time" {
			return nil
		}
		return v
	case elem.Kind == Builtin && elem.Name == "int64":
		if !slices.Equal(types, []string{"integer"}) || !l.planNumber(n, v, true) {
			return nil
		}
		return v
	case elem.Kind == Builtin && elem.Name == "float64":
		if !(slices.Equal(types, []string{"number"}) || len(types) == 2 && slices.Contains(types, "integer") && slices.Contains(types, "number")) ||
			!l.planNumber(n, v, false) {
			return nil
		}
		return v
	case elem.Kind == Builtin && elem.Name == "bool":
		if !slices.Equal(types, []string{"boolean"}) || !onlyKeywords(n, "type") {
			return nil
		}
		return v
	case elem.Kind == Slice:
		if !slices.Equal(types, []string{"array"}) || !onlyKeywords(n, "type", "items", "minItems", "maxItems") {
			return nil
		}
		items := n.get("items")
		if items == nil || items.kind == jArray {
			return nil
		}
		var ok bool
		if v.MinItems, ok = intKeyword(n, "minItems"); !ok {
			return nil
		}
		if v.MaxItems, ok = intKeyword(n, "maxItems"); !ok {
			return nil
		}
		if v.Items = l.planValue(items, d, elem.Elem, depth+1); v.Items == nil {
			return nil
		}
		return v
	case elem.Kind == Map:
		if !slices.Equal(types, []string{"object"}) || !onlyKeywords(n, "type", "additionalProperties") {
			return nil
		}
		ap := n.get("additionalProperties")
		if ap == nil || ap.kind == jBool {
			return nil
		}
		if v.Values = l.planValue(ap, d, elem.Elem, depth+1); v.Values == nil {
			return nil
		}
		return v
	case elem.Kind == Qual && elem.Name == "RawMessage":
		if !onlyKeywords(n) {
			return nil
		}
		return anyValue(elem)
	}
	return nil
}

// nullBranchOf returns x when n is {"anyOf" or "oneOf": [x, {"type":
// "null"}]} (either order) and nothing else asserting.
func nullBranchOf(n *jvalue) (*jvalue, bool) {
	for _, kw := range []string{"anyOf", "oneOf"} {
		arr := n.get(kw)
		if arr == nil || !onlyKeywords(n, kw) || arr.kind != jArray || len(arr.arr) != 2 {
			continue
		}
		a, b := arr.arr[0], arr.arr[1]
		switch {
		case isNullSchema(b) && onlyKeywords(b, "type") && !isNullSchema(a):
			return a, true
		case isNullSchema(a) && onlyKeywords(a, "type") && !isNullSchema(b):
			return b, true
		}
	}
	return nil, false
}

// refusesNull says schema n (following $refs) has a type without null.
func (l *jsonLoader) refusesNull(n *jvalue, d *jsonDoc, depth int) bool {
	if depth > maxDepth || n.kind != jObject {
		return false
	}
	if ref, ok := n.getStr("$ref"); ok {
		m, md, _, ok := l.resolveQuiet(ref, d)
		return ok && l.refusesNull(m, md, depth+1)
	}
	types, null := jsonTypes(n)
	return len(types) > 0 && !null
}

func derefRaw(r *TypeRef) *TypeRef {
	if r.Kind == Pointer {
		return r.Elem
	}
	return r
}

// stringTyped says n's values are strings: its type says so, or it has
// none and its enum or const has only strings.
func stringTyped(types []string, n *jvalue) bool {
	if len(types) > 0 {
		return slices.Equal(types, []string{"string"})
	}
	var list []*jvalue
	if e := n.get("enum"); e != nil && e.kind == jArray {
		list = e.arr
	} else if c := n.get("const"); c != nil {
		list = []*jvalue{c}
	}
	for _, x := range list {
		if x.kind != jString {
			return false
		}
	}
	return len(list) > 0
}

// planString plans the string keywords of n into v.
func (l *jsonLoader) planString(n *jvalue, v *JSONValueCheck) bool {
	if !onlyKeywords(n, "type", "enum", "const", "minLength", "maxLength", "pattern", "format") {
		return false
	}
	if e := n.get("enum"); e != nil {
		if e.kind != jArray || n.get("const") != nil {
			return false
		}
		v.Enum = []string{}
		for _, x := range e.arr {
			if x.kind != jString {
				return false
			}
			if !slices.Contains(v.Enum, x.str) {
				v.Enum = append(v.Enum, x.str) // a switch takes each once
			}
		}
		if len(v.Enum) == 0 {
			return false // nothing is valid: the reference says so
		}
	}
	if c := n.get("const"); c != nil {
		if c.kind != jString {
			return false
		}
		v.Enum = []string{c.str}
	}
	var ok bool
	if v.MinLength, ok = intKeyword(n, "minLength"); !ok {
		return false
	}
	if v.MaxLength, ok = intKeyword(n, "maxLength"); !ok {
		return false
	}
	if p := n.get("pattern"); p != nil {
		if p.kind != jString {
			return false
		}
		if _, err := regexp.Compile(p.str); err != nil {
			return false
		}
		v.Pattern = p.str
	}
	if f := n.get("format"); f != nil {
		if f.kind != jString {
			return false
		}
		if slices.Contains(JSONCheckFormats, f.str) {
			v.Format = f.str
		} else if f.str == "regex" {
			return false // the reference's regexp engine decides
		}
		// any other format is not asserted by the reference
	}
	return true
}

// intKeyword reads a non-negative integer keyword, -1 when absent.
func intKeyword(n *jvalue, k string) (int, bool) {
	x := n.get(k)
	if x == nil {
		return -1, true
	}
	if x.kind != jNumber {
		return 0, false
	}
	i, err := x.num.Int64()
	if err != nil || i < 0 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

// planNumber plans the numeric keywords of n into v, for an int64 field
// (integer) or a float64 one. A bound is kept only when the Go comparison
// is exact: any bound for an int64 (made an inclusive integer), a bound a
// float64 represents exactly for a float64; multipleOf only for an int64
// and an integer.
func (l *jsonLoader) planNumber(n *jvalue, v *JSONValueCheck, integer bool) bool {
	if !onlyKeywords(n, "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf") {
		return false
	}
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		x := n.get(k)
		if x == nil {
			continue
		}
		if x.kind != jNumber {
			return false // draft 4's boolean exclusive bounds
		}
		lit, ok := numberBound(string(x.num), k, integer)
		if !ok {
			return false
		}
		switch k {
		case "minimum":
			v.Minimum = lit
		case "maximum":
			v.Maximum = lit
		case "exclusiveMinimum":
			if integer {
				v.Minimum = maxLit(v.Minimum, lit)
			} else {
				v.ExclusiveMinimum = lit
			}
		case "exclusiveMaximum":
			if integer {
				v.Maximum = minLit(v.Maximum, lit)
			} else {
				v.ExclusiveMaximum = lit
			}
		}
	}
	if m := n.get("multipleOf"); m != nil {
		if !integer || m.kind != jNumber {
			return false
		}
		k, err := m.num.Int64()
		if err != nil || k <= 0 {
			return false
		}
		v.MultipleOf = k
	}
	return true
}

// numberBound is the Go literal of a bound: for an integer field the
// smallest (minimum, exclusiveMinimum) or largest (maximum,
// exclusiveMaximum) int64 the bound admits, inclusive; for a float64 the
// bound itself when a float64 holds it exactly.
func numberBound(text, kw string, integer bool) (string, bool) {
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return "", false
	}
	if !integer {
		// A float64 that holds the bound exactly and whose shortest
		// form (what encoding/json writes) is the bound: then a value
		// equal to it is written as the bound itself.
		f, exact := r.Float64()
		if !exact || math.IsInf(f, 0) {
			return "", false
		}
		short := strconv.FormatFloat(f, 'g', -1, 64)
		if back, ok := new(big.Rat).SetString(short); !ok || back.Cmp(r) != 0 {
			return "", false
		}
		return short, true
	}
	num, den := r.Num(), r.Denom()
	q, m := new(big.Int).DivMod(num, den, new(big.Int)) // floor
	switch kw {
	case "minimum":
		if m.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
	case "exclusiveMinimum":
		q.Add(q, big.NewInt(1))
	case "exclusiveMaximum":
		if m.Sign() == 0 {
			q.Sub(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() {
		return "", false
	}
	return q.String(), true
}

func maxLit(a, b string) string {
	if a == "" {
		return b
	}
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	if x.Cmp(y) >= 0 {
		return a
	}
	return b
}

func minLit(a, b string) string {
	if a == "" {
		return b
	}
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	if x.Cmp(y) <= 0 {
		return a
	}
	return b
}
