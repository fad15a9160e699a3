package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// avroExplain turns a hamba/avro parse error into a pointer, a construct
// and a message that says what to do.
func avroExplain(raw *jvalue, err error) (ptr, construct, msg string) {
	text := strings.TrimPrefix(err.Error(), "avro: ")
	if name, ok := strings.CutPrefix(text, "unknown type: "); ok {
		ptr := findTypeRef(raw, "#", name)
		if ptr == "" {
			ptr = "#"
		}
		return ptr, "named type reference", fmt.Sprintf("type %q is not defined in this file; a schema must define every named type it uses (a reference to a type in another file cannot be resolved): define %s inline at its first use", name, name)
	}
	return "#", "avro schema", fmt.Sprintf("not a valid Avro schema: %s", text)
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
