package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// avroChecker walks an Avro schema hamba/avro refused, as the
// specification reads it, to find where it is wrong: hamba's errors name
// no place ("avro: field requires a type"), and a message that says # of a
// schema of forty fields is no help. It defines named types in document
// order, as Avro does, so that a default of a named type can be checked.
type avroChecker struct {
	named map[string]*jvalue // full name → definition
	probs []problem
}

// avroLocate lists the problems of raw it can place.
func avroLocate(raw *jvalue) []problem {
	c := &avroChecker{named: map[string]*jvalue{}}
	c.schema(raw, "#", "")
	return c.probs
}

func (c *avroChecker) fail(ptr, construct, format string, args ...any) {
	c.probs = append(c.probs, problem{ptr, construct, fmt.Sprintf(format, args...)})
}

var avroName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// schema checks the schema v at ptr; ns is the enclosing namespace.
func (c *avroChecker) schema(v *jvalue, ptr, ns string) {
	switch v.kind {
	case jString:
		// A primitive or a named type: undefinedAvroRefs reports a name
		// that is neither.
	case jArray:
		c.union(v, ptr, ns)
	case jObject:
		c.object(v, ptr, ns)
	default:
		c.fail(ptr, "type", "must be a type: a name (\"string\", a named type), a union (an array of types) or an object (\"type\": \"record\", ...), got %s", describeJ(v))
	}
}

func (c *avroChecker) union(v *jvalue, ptr, ns string) {
	seen := map[string]int{}
	for i, b := range v.arr {
		bp := ptr + "/" + strconv.Itoa(i)
		if b.kind == jArray {
			c.fail(bp, "union", "a union's branch cannot be a union; list its types in this union")
			continue
		}
		c.schema(b, bp, ns)
		key := c.branchKey(b, ns)
		if j, dup := seen[key]; dup && key != "" {
			c.fail(bp, "union", "the union already has the branch %s (at %d): a union holds each type once", key, j)
			continue
		}
		seen[key] = i
	}
}

// branchKey is what makes a union's branch unique: its full name for a
// named type, else its type.
func (c *avroChecker) branchKey(b *jvalue, ns string) string {
	switch b.kind {
	case jString:
		return fullName(b.str, ns)
	case jObject:
		t, _ := b.getStr("type")
		switch t {
		case "record", "error", "enum", "fixed":
			n, _ := b.getStr("name")
			if n == "" {
				return ""
			}
			return fullName(n, nsOf(b, ns))
		}
		return t
	}
	return ""
}

func (c *avroChecker) object(v *jvalue, ptr, ns string) {
	t := v.get("type")
	if t == nil {
		c.fail(ptr, "type", `has no "type": write one ("record", "enum", "array", "string", ...)`)
		return
	}
	if t.kind != jString {
		c.schema(t, ptr+"/type", ns)
		return
	}
	switch t.str {
	case "record", "error":
		c.record(v, ptr, ns, t.str)
	case "enum":
		if c.define(v, ptr, ns, "enum") {
			c.enum(v, ptr)
		}
	case "fixed":
		if c.define(v, ptr, ns, "fixed") {
			c.fixed(v, ptr)
		}
	case "array":
		if it := v.get("items"); it != nil {
			c.schema(it, ptr+"/items", ns)
		} else {
			c.fail(ptr, "array", `an array needs "items", the type of its elements`)
		}
	case "map":
		if vs := v.get("values"); vs != nil {
			c.schema(vs, ptr+"/values", ns)
		} else {
			c.fail(ptr, "map", `a map needs "values", the type of its values`)
		}
	}
}

// define checks the name of a named type and records it; false when it
// has no usable name.
func (c *avroChecker) define(v *jvalue, ptr, ns, what string) bool {
	nv := v.get("name")
	name, _ := v.getStr("name")
	if nv == nil || name == "" {
		c.fail(ptr, what, `the %s has no "name": a named type needs one (it names the Go type, and other places refer to it by it)`, what)
		return false
	}
	if m := v.get("namespace"); m != nil && m.kind == jString && m.str != "" {
		if bad := badName(m.str); bad != "" {
			c.fail(ptr+"/namespace", what, "namespace %q: %s", m.str, bad)
			return false
		}
	}
	if bad := badName(name); bad != "" {
		c.fail(ptr+"/name", what, "name %q: %s", name, bad)
		return false
	}
	c.attributes(v, ptr, what)
	full := fullName(name, nsOf(v, ns))
	if _, dup := c.named[full]; dup {
		c.fail(ptr+"/name", what, "the type %s is defined twice: define it once, then refer to it by its name", full)
		return false
	}
	c.named[full] = v
	return true
}

// attributes checks what a field and a named type may both have: a doc
// that is a string, aliases that are an array of names.
func (c *avroChecker) attributes(v *jvalue, ptr, construct string) {
	if d := v.get("doc"); d != nil && d.kind != jString {
		c.fail(ptr+"/doc", construct, "must be a string, got %s", describeJ(d))
	}
	a := v.get("aliases")
	if a == nil {
		return
	}
	if a.kind != jArray {
		c.fail(ptr+"/aliases", construct, "must be an array of names, got %s", describeJ(a))
		return
	}
	for i, e := range a.arr {
		if e.kind != jString || badName(e.str) != "" {
			c.fail(fmt.Sprintf("%s/aliases/%d", ptr, i), construct, "%s is not an Avro name (a letter or _, then letters, digits or _, dotted)", e.raw())
		}
	}
}

// badName says why a dotted Avro name is not one, or "".
func badName(name string) string {
	for _, part := range strings.Split(name, ".") {
		if !avroName.MatchString(part) {
			return fmt.Sprintf("%q is not an Avro name (a letter or _, then letters, digits or _)", part)
		}
	}
	return ""
}

// nsOf is the namespace names inside v are in.
func nsOf(v *jvalue, ns string) string {
	if n, _ := v.getStr("name"); strings.Contains(n, ".") {
		return n[:strings.LastIndex(n, ".")]
	}
	if n, ok := v.getStr("namespace"); ok {
		return n
	}
	return ns
}

func fullName(name, ns string) string {
	if avroPrimitives[name] || strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func (c *avroChecker) record(v *jvalue, ptr, ns, what string) {
	if !c.define(v, ptr, ns, what) {
		return
	}
	inner := nsOf(v, ns)
	fs := v.get("fields")
	switch {
	case fs == nil:
		c.fail(ptr, what, `the %s has no "fields": write "fields": [] for a %s without fields`, what, what)
		return
	case fs.kind != jArray:
		c.fail(ptr+"/fields", what, "must be an array of fields, got %s", describeJ(fs))
		return
	}
	names := map[string]int{}
	for i, f := range fs.arr {
		fp := fmt.Sprintf("%s/fields/%d", ptr, i)
		if f.kind != jObject {
			c.fail(fp, "field", `must be a field, an object with "name" and "type", got %s`, describeJ(f))
			continue
		}
		name, _ := f.getStr("name")
		switch {
		case name == "":
			c.fail(fp, "field", `the field has no "name"`)
		case !avroName.MatchString(name):
			c.fail(fp+"/name", "field", "%q is not an Avro name (a letter or _, then letters, digits or _)", name)
		default:
			if j, dup := names[name]; dup {
				c.fail(fp+"/name", "field", "the %s already has a field %q (fields/%d): field names are unique", what, name, j)
			}
			names[name] = i
		}
		c.attributes(f, fp, "field")
		if o := f.get("order"); o != nil && (o.kind != jString || o.str != "ascending" && o.str != "descending" && o.str != "ignore") {
			c.fail(fp+"/order", "field", `must be "ascending", "descending" or "ignore", got %s`, describeJ(o))
		}
		ft := f.get("type")
		if ft == nil {
			c.fail(fp, "field", `the field %q has no "type"`, name)
			continue
		}
		n := len(c.probs)
		c.schema(ft, fp+"/type", inner)
		if d := f.get("default"); d != nil && len(c.probs) == n {
			if why := c.defaultFits(d, ft, inner); why != "" {
				c.fail(fp+"/default", "default", "the default %s of the field %q %s; fix it, or remove the default", d.raw(), name, why)
			}
		}
	}
}

func (c *avroChecker) enum(v *jvalue, ptr string) {
	syms := v.get("symbols")
	switch {
	case syms == nil:
		c.fail(ptr, "enum", `an enum needs "symbols", an array of names`)
		return
	case syms.kind != jArray:
		c.fail(ptr+"/symbols", "enum", "must be an array of names, got %s", describeJ(syms))
		return
	case len(syms.arr) == 0:
		c.fail(ptr+"/symbols", "enum", "an enum needs at least one symbol")
		return
	}
	seen := map[string]int{}
	var all []string
	for i, s := range syms.arr {
		sp := fmt.Sprintf("%s/symbols/%d", ptr, i)
		switch {
		case s.kind != jString || !avroName.MatchString(s.str):
			c.fail(sp, "enum", "%s is not an Avro name (a letter or _, then letters, digits or _)", s.raw())
		default:
			if j, dup := seen[s.str]; dup {
				c.fail(sp, "enum", "the symbol %q is listed twice (symbols/%d)", s.str, j)
			}
			seen[s.str] = i
			all = append(all, s.str)
		}
	}
	if d := v.get("default"); d != nil {
		if _, ok := seen[d.str]; d.kind != jString || !ok {
			c.fail(ptr+"/default", "enum", "the default %s is not one of the symbols%s", d.raw(), manifest.DidYouMean(d.str, all))
		}
	}
}

func (c *avroChecker) fixed(v *jvalue, ptr string) {
	s := v.get("size")
	if s == nil {
		c.fail(ptr, "fixed", `a fixed needs "size", its length in bytes`)
		return
	}
	if n, err := strconv.Atoi(s.num.String()); s.kind != jNumber || err != nil || n < 0 {
		c.fail(ptr+"/size", "fixed", "must be a length in bytes (0 or more), got %s", describeJ(s))
	}
}

// defaultFits says why d is not a value of the schema t, or "".
func (c *avroChecker) defaultFits(d, t *jvalue, ns string) string {
	switch t.kind {
	case jArray:
		if len(t.arr) == 0 {
			return ""
		}
		if why := c.defaultFits(d, t.arr[0], ns); why != "" {
			return fmt.Sprintf("does not match the union's first branch %s (a union's default is a value of its first branch: list the branch of the default first)", t.arr[0].raw())
		}
		return ""
	case jObject:
		ts, _ := t.getStr("type")
		switch ts {
		case "record", "error":
			return c.recordDefault(d, t, nsOf(t, ns))
		case "enum":
			if syms := t.get("symbols"); syms != nil {
				for _, s := range syms.arr {
					if d.kind == jString && s.str == d.str {
						return ""
					}
				}
			}
			return "is not one of the enum's symbols"
		case "array":
			if d.kind != jArray {
				return "is not an array"
			}
			for i, e := range d.arr {
				if why := c.defaultFits(e, t.get("items"), ns); why != "" {
					return fmt.Sprintf("is not an array of its items: its item %d (%s) %s", i, e.raw(), why)
				}
			}
			return ""
		case "map":
			if d.kind != jObject {
				return "is not a map (a JSON object)"
			}
			for _, k := range d.keys {
				if why := c.defaultFits(d.obj[k], t.get("values"), ns); why != "" {
					return fmt.Sprintf("is not a map of its values: its value %q (%s) %s", k, d.obj[k].raw(), why)
				}
			}
			return ""
		case "fixed":
			if d.kind != jString {
				return "is not a fixed (a string of its bytes)"
			}
			return ""
		}
		return c.defaultFits(d, t.get("type"), ns)
	case jString:
		return c.primitiveDefault(d, t.str, ns)
	}
	return ""
}

// recordDefault says why d is not a value of the record t: a JSON object
// with a value of each field's type, for every field without a default of
// its own.
func (c *avroChecker) recordDefault(d, t *jvalue, ns string) string {
	if d.kind != jObject {
		return "is not a record (a JSON object of its fields)"
	}
	fs := t.get("fields")
	if fs == nil {
		return ""
	}
	for _, f := range fs.arr {
		name, _ := f.getStr("name")
		v, ok := d.obj[name]
		switch {
		case !ok && f.get("default") == nil:
			return fmt.Sprintf("lacks the record's field %q, which has no default", name)
		case ok && f.get("type") != nil:
			if why := c.defaultFits(v, f.get("type"), ns); why != "" {
				return fmt.Sprintf("is not a record of its fields: its field %q (%s) %s", name, v.raw(), why)
			}
		}
	}
	return ""
}

func (c *avroChecker) primitiveDefault(d *jvalue, t, ns string) string {
	want := map[string]jkind{"null": jNull, "boolean": jBool, "int": jNumber, "long": jNumber,
		"float": jNumber, "double": jNumber, "bytes": jString, "string": jString}
	k, ok := want[t]
	if !ok {
		if def := c.named[fullName(t, ns)]; def != nil {
			return c.defaultFits(d, def, ns)
		}
		return ""
	}
	if d.kind != k && !(d.kind == jString && (t == "float" || t == "double") && (d.str == "NaN" || d.str == "Infinity" || d.str == "-Infinity")) {
		return fmt.Sprintf("is not %s", avroValueWords[t])
	}
	if (t == "int" || t == "long") && d.kind == jNumber {
		bits := 32
		if t == "long" {
			bits = 64
		}
		if _, err := strconv.ParseInt(d.num.String(), 10, bits); err != nil {
			return fmt.Sprintf("is not %s", avroValueWords[t])
		}
	}
	return ""
}

var avroValueWords = map[string]string{
	"null": "null", "boolean": "a boolean (true or false)", "int": "an int (a whole number of 32 bits)",
	"long": "a long (a whole number of 64 bits)", "float": "a float (a number)", "double": "a double (a number)",
	"bytes": "bytes (a string)", "string": "a string",
}

// describeJ names a JSON value: the string "x", the number 5, an object.
func describeJ(v *jvalue) string {
	switch v.kind {
	case jNull:
		return "null"
	case jBool:
		return fmt.Sprintf("the boolean %t", v.b)
	case jNumber:
		return "the number " + v.num.String()
	case jString:
		return "the string " + jsonText(v.str)
	case jArray:
		return "an array"
	}
	return "an object"
}
