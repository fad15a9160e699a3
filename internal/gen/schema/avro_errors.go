package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// problem is one thing wrong in a schema, at a pointer into it.
type problem struct{ ptr, construct, msg string }

// avroExplain turns a hamba/avro parse error into problems with a pointer,
// a construct and a message that says what to do. hamba stops at the first
// unknown type; every undefined reference is found and reported. Its other
// errors name no place: avroLocate finds it (hamba's text at # when it
// cannot).
func avroExplain(raw *jvalue, err error) []problem {
	text := strings.TrimPrefix(err.Error(), "avro: ")
	if name, ok := strings.CutPrefix(text, "unknown type: "); ok {
		if probs := undefinedAvroRefs(raw); len(probs) > 0 {
			return probs
		}
		if ptr := findTypeRef(raw, "#", name); ptr != "" {
			return []problem{{ptr, "named type reference", undefinedMsg(name)}}
		}
	}
	if probs := avroLocate(raw); len(probs) > 0 {
		return probs
	}
	text = strings.Join(strings.Fields(text), " ") // hamba's mapstructure errors span lines
	if p := hambaFieldDefault(raw, text); p != "" {
		return []problem{{p, "default", fmt.Sprintf("not a valid default: %s; fix it, or remove the default", text)}}
	}
	return []problem{{"#", "avro schema", fmt.Sprintf("not a valid Avro schema: %s; fix the schema (hamba/avro must parse it)", text)}}
}

// hambaFieldDefault is the pointer of the default of the first field
// that hamba's "invalid default for field NAME." names, or "".
func hambaFieldDefault(raw *jvalue, text string) string {
	rest, ok := strings.CutPrefix(text, "invalid default for field ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ". ")
	var find func(v *jvalue, ptr string) string
	find = func(v *jvalue, ptr string) string {
		switch v.kind {
		case jArray:
			for i, e := range v.arr {
				if p := find(e, ptr+"/"+strconv.Itoa(i)); p != "" {
					return p
				}
			}
		case jObject:
			if fs := v.get("fields"); fs != nil && fs.kind == jArray {
				for i, f := range fs.arr {
					fp := fmt.Sprintf("%s/fields/%d", ptr, i)
					if n, _ := f.getStr("name"); n == name && f.get("default") != nil {
						return fp + "/default"
					}
					if ft := f.get("type"); ft != nil {
						if p := find(ft, fp+"/type"); p != "" {
							return p
						}
					}
				}
			}
			for _, k := range []string{"type", "items", "values"} {
				if m := v.get(k); m != nil {
					if p := find(m, ptr+"/"+k); p != "" {
						return p
					}
				}
			}
		}
		return ""
	}
	return find(raw, "#")
}

func undefinedMsg(name string) string {
	if want, ok := otherLanguagesPrimitives[strings.ToLower(name)]; ok {
		return fmt.Sprintf("type %q is neither an Avro primitive nor a named type defined in this file (did you mean %s?)", name, want)
	}
	if hint := manifest.DidYouMean(name, primitiveNames); hint != "" {
		return fmt.Sprintf("type %q is neither an Avro primitive nor a named type defined in this file%s", name, hint)
	}
	return fmt.Sprintf("type %q is not defined in this file; a schema must define every named type it uses before it uses it (a reference to a type in another file cannot be resolved): define %s inline at its first use", name, name)
}

// otherLanguagesPrimitives are the type names of JSON Schema, SQL and
// programming languages that people write for an Avro primitive.
var otherLanguagesPrimitives = map[string]string{
	"integer": `"int" or "long"`, "number": `"int", "long", "float" or "double"`, "bool": `"boolean"`,
	"int32": `"int"`, "int64": `"long"`, "float32": `"float"`, "float64": `"double"`,
	"bigint": `"long"`, "smallint": `"int"`, "short": `"int"`, "byte": `"int" or "bytes"`,
	"str": `"string"`, "text": `"string"`, "varchar": `"string"`, "char": `"string"`, "binary": `"bytes"`,
}

var primitiveNames = []string{"null", "boolean", "int", "long", "float", "double", "bytes", "string"}

// avroTypeNames are the values of an object's "type" that are not a name.
var avroTypeNames = append([]string{"record", "error", "enum", "array", "map", "fixed"}, primitiveNames...)

var avroPrimitives = map[string]bool{
	"null": true, "boolean": true, "int": true, "long": true, "float": true,
	"double": true, "bytes": true, "string": true,
}

// undefinedAvroRefs walks the schema in document order, defining named
// types as it meets them (Avro requires a definition before any use) and
// reporting every reference to a name not defined yet.
func undefinedAvroRefs(raw *jvalue) []problem {
	defined := map[string]bool{}
	var probs []problem
	var walk func(v *jvalue, ptr, ns string)
	walk = func(v *jvalue, ptr, ns string) {
		switch v.kind {
		case jString:
			if avroPrimitives[v.str] {
				return
			}
			full := v.str
			if !strings.Contains(full, ".") && ns != "" {
				full = ns + "." + full
			}
			if !defined[full] && !defined[v.str] {
				probs = append(probs, problem{ptr, "named type reference", undefinedMsg(v.str)})
			}
		case jArray:
			for i, e := range v.arr {
				walk(e, fmt.Sprintf("%s/%d", ptr, i), ns)
			}
		case jObject:
			t := v.get("type")
			if t == nil {
				return
			}
			if t.kind != jString {
				walk(t, ptr+"/type", ns)
				return
			}
			switch t.str {
			case "record", "error", "enum", "fixed":
				name, _ := v.getStr("name")
				inner := ns
				if n, ok := v.getStr("namespace"); ok {
					inner = n
				}
				full := name
				if i := strings.LastIndex(name, "."); i >= 0 {
					inner = name[:i]
				} else if inner != "" {
					full = inner + "." + name
				}
				defined[full] = true
				if fs := v.get("fields"); fs != nil && fs.kind == jArray {
					for i, f := range fs.arr {
						if ft := f.get("type"); ft != nil {
							walk(ft, fmt.Sprintf("%s/fields/%d/type", ptr, i), inner)
						}
					}
				}
			case "array":
				if it := v.get("items"); it != nil {
					walk(it, ptr+"/items", ns)
				}
			case "map":
				if vs := v.get("values"); vs != nil {
					walk(vs, ptr+"/values", ns)
				}
			default:
				if !avroPrimitives[t.str] && !defined[t.str] {
					if hint := manifest.DidYouMean(t.str, avroTypeNames); hint != "" {
						probs = append(probs, problem{ptr + "/type", "type", fmt.Sprintf("%q is not an Avro type%s", t.str, hint)})
						return
					}
				}
				walk(t, ptr+"/type", ns)
			}
		}
	}
	walk(raw, "#", "")
	return probs
}

// findTypeRef returns the pointer of the first place where name is used as
// a type (not as a name, namespace, doc or symbol).
func findTypeRef(v *jvalue, ptr, name string) string {
	switch v.kind {
	case jString:
		if v.str == name || strings.HasSuffix(v.str, "."+name) {
			return ptr
		}
	case jArray:
		for i, e := range v.arr {
			if p := findTypeRef(e, ptr+"/"+strconv.Itoa(i), name); p != "" {
				return p
			}
		}
	case jObject:
		for _, k := range v.keys {
			switch k {
			case "type", "items", "values", "fields":
				if p := findTypeRef(v.obj[k], ptr+"/"+escapePointer(k), name); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// escapePointer escapes a JSON pointer token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// avroLogicalTypes are the logical types of the Avro specification (1.12):
// hamba/avro implements all but big-decimal, timestamp-nanos and
// local-timestamp-nanos, which it reads as their underlying type, as it
// does any logical type it does not know.
var avroLogicalTypes = []string{
	"decimal", "big-decimal", "uuid", "date", "time-millis", "time-micros",
	"timestamp-millis", "timestamp-micros", "timestamp-nanos",
	"local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos",
	"duration",
}

// avroLogicalTypos finds each logicalType of raw that is not a logical
// type of the specification but is within two edits (case folded) of one:
// a typo, which Avro would silently read as the underlying type
// ("timestamp-milis" on a long: an int64, not a time). A logicalType
// further from every known one is legal Avro, a logical type of someone
// else's, and is left alone: the field is its underlying type.
func avroLogicalTypos(raw *jvalue) []problem {
	var probs []problem
	var walk func(v *jvalue, ptr string)
	walk = func(v *jvalue, ptr string) {
		switch v.kind {
		case jArray:
			for i, e := range v.arr {
				walk(e, fmt.Sprintf("%s/%d", ptr, i))
			}
		case jObject:
			for _, k := range v.keys {
				kp := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
				if k == "logicalType" {
					if lt := v.obj[k]; lt.kind == jString {
						if p, ok := logicalTypo(lt.str, v); ok {
							probs = append(probs, problem{kp, "logicalType", p})
						}
					}
					continue
				}
				walk(v.obj[k], kp)
			}
		}
	}
	walk(raw, "#")
	return probs
}

// logicalTypo says why name, the logicalType of schema v, is a typo of a
// known logical type; ok is false when it is known, or too far from every
// known one to be a typo.
func logicalTypo(name string, v *jvalue) (msg string, ok bool) {
	best, bestD := "", 3
	for _, k := range avroLogicalTypes {
		if name == k {
			return "", false
		}
		if d := manifest.EditDistance(strings.ToLower(name), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return "", false
	}
	under := "its type"
	if t, isStr := v.getStr("type"); isStr {
		under = t
	}
	return fmt.Sprintf("%q is not an Avro logical type (did you mean %q?); a logical type Avro does not know is read as its underlying type (here %s)", name, best, under), true
}
