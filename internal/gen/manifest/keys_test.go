package manifest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/schemas"
	"go.yaml.in/yaml/v3"
)

// The keys of the manifest are written twice, in the schema and in the yaml
// tags of ast.go. These tests prove the two agree, both ways: every property
// of the schema (through $ref, mappings of entries and lists) is a field of
// the tree and is read into it, and every field of the tree is a property
// of the schema. A key the schema accepts but the tree lacks would be
// validated, then silently ignored.
//
// Paths name a place of both: queues.*.bindings[].routing_key is the
// routing_key of an item of the bindings of any queue.

// TestSchemaKeysReachTheTree compares the properties of the schema with the
// fields of the tree.
func TestSchemaKeysReachTheTree(t *testing.T) {
	for _, p := range keyMismatches(t, loadSchema(t), reflect.TypeFor[File]()) {
		t.Error(p)
	}
}

// TestEverySchemaKeyIsDecoded writes a manifest that sets every property of
// the schema, parses it, and checks that every field of the tree holds a
// value read from the right key: the value and position of every leaf, the
// key of every entry and the position of every block.
func TestEverySchemaKeyIsDecoded(t *testing.T) {
	root := loadSchema(t)
	src, err := yaml.Marshal(sample(t, root, root))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("acemq.yaml", src)
	if err != nil {
		t.Fatalf("the manifest written from the schema is refused (give sample a value for the new keyword or pattern):\n%v\n%s", err, src)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	at := map[Pos][]string{}
	positions(t, root, root, doc.Content[0], "", at)
	var problems []string
	filled(reflect.ValueOf(f).Elem(), "", at, &problems)
	for _, p := range problems {
		t.Error(p)
	}
	if t.Failed() {
		t.Logf("the manifest:\n%s", src)
	}
}

// The comparison fails on a schema with a key the tree lacks, and on a
// tree with a field the schema lacks.
func TestKeyMismatchesCanFail(t *testing.T) {
	root := loadSchema(t)
	queue := root["$defs"].(map[string]any)["queue"].(map[string]any)
	queue["properties"].(map[string]any)["exclusive"] = map[string]any{"type": "boolean"}
	got := keyMismatches(t, root, reflect.TypeFor[File]())
	want := []string{`schema property queues.*.exclusive is no field of the tree: add one to ast.go with yaml:"exclusive"`}
	if !slices.Equal(got, want) {
		t.Errorf("a key only in the schema: got %q\nwant %q", got, want)
	}

	type extraQueue struct {
		Name      Str  `yaml:",key"`
		Exclusive *Str `yaml:"exclusive"`
	}
	type extraFile struct {
		Queues []*extraQueue `yaml:"queues"`
	}
	got = keyMismatches(t, loadSchema(t), reflect.TypeFor[extraFile]())
	if !slices.Contains(got, `field queues.*.exclusive (extraQueue.Exclusive) is not a property of the schema`) {
		t.Errorf("a field only in the tree: got %q", got)
	}
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(schemas.Manifest, &root); err != nil {
		t.Fatal(err)
	}
	return root
}

// keyMismatches lists the paths of the schema that are no field of the
// tree under file, and the other way round, sorted.
func keyMismatches(t *testing.T, root map[string]any, file reflect.Type) []string {
	inSchema := map[string]bool{}
	schemaPaths(t, root, root, "", inSchema)
	inTree := map[string]string{}
	treePaths(file, "", inTree)
	var out []string
	for p := range inSchema {
		if _, ok := inTree[p]; !ok {
			out = append(out, fmt.Sprintf("schema property %s is no field of the tree: add one to ast.go%s", p, tagHint(p)))
		}
	}
	for p, field := range inTree {
		if !inSchema[p] {
			out = append(out, fmt.Sprintf("field %s (%s) is not a property of the schema", p, field))
		}
	}
	sort.Strings(out)
	return out
}

// tagHint is the tag a field for the schema path p wants.
func tagHint(p string) string {
	k := p[strings.LastIndex(p, ".")+1:]
	switch {
	case k == "*":
		return " (a slice of a struct with a ,key field)"
	case strings.HasSuffix(k, "[]"):
		return " (a slice)"
	}
	return fmt.Sprintf(" with yaml:%q", k)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve follows the $ref of s, of the form #/$defs/name (the keywords
// beside a $ref are annotations), and refuses the keywords this walk does
// not follow, which could hide properties.
func resolve(t *testing.T, root, s map[string]any) map[string]any {
	t.Helper()
	for {
		for _, k := range []string{"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "patternProperties",
			"prefixItems", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains", "$dynamicRef"} {
			if _, ok := s[k]; ok {
				t.Fatalf("the schema uses %s, which keys_test.go does not walk: teach it", k)
			}
		}
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		def, _ := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || def == nil {
			t.Fatalf("$ref %q: keys_test.go follows #/$defs/<name> only", ref)
		}
		s = def
	}
}

// schemaPaths adds the path of every property under s.
func schemaPaths(t *testing.T, root, s map[string]any, path string, out map[string]bool) {
	s = resolve(t, root, s)
	props, _ := s["properties"].(map[string]any)
	for k, p := range props {
		out[join(path, k)] = true
		schemaPaths(t, root, p.(map[string]any), join(path, k), out)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		out[path+".*"] = true
		schemaPaths(t, root, ap, path+".*", out)
	}
	if items, ok := s["items"].(map[string]any); ok {
		out[path+"[]"] = true
		schemaPaths(t, root, items, path+"[]", out)
	}
}

// treePaths adds the path of every field under the type typ, with the
// field's name.
func treePaths(typ reflect.Type, path string, out map[string]string) {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch {
	case isLeaf(typ):
	case typ.Kind() == reflect.Slice:
		p := path + "[]"
		if isEntry(typ.Elem()) {
			p = path + ".*"
		}
		out[p] = typ.String()
		treePaths(typ.Elem(), p, out)
	case typ.Kind() == reflect.Struct:
		fieldsOf(typ) // refuses a field without a tag, or with a tag the decoder does not know
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch tag := f.Tag.Get("yaml"); tag {
			case "-", ",key", ",pos":
			case ",value":
				treePaths(f.Type, path, out)
			default:
				out[join(path, tag)] = typ.Name() + "." + f.Name
				treePaths(f.Type, join(path, tag), out)
			}
		}
	}
}

func isLeaf(t reflect.Type) bool {
	return t == strType || t == intType || t == floatType || t == boolType || t == anyType
}

// samplePatterns are values that match the patterns of the schema, and
// entry names that match its propertyNames.
var samplePatterns = map[string]string{
	`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`: "30s",
	`^[A-Za-z_][A-Za-z0-9_]*$`:                      "REGISTRY_TOKEN",
	`^[a-z_][a-z0-9_]*$`:                            "orders",
	`^[A-Za-z][A-Za-z0-9]*$`:                        "SKU",
	`^[a-z_][a-z0-9_]{0,39}$`:                       "billing_",
	`^#/`:                                           "#/properties/order_id",
	`^x-`:                                           "x-max-length",
	`^([^#]+#(/.*)?|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)$`: "common/address.json#",
}

// sample is a value of s that sets every property: one entry of a mapping
// of entries, one item of a list, a non-zero scalar.
func sample(t *testing.T, root, s map[string]any) any {
	t.Helper()
	s = resolve(t, root, s)
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok {
		return e[0]
	}
	switch typ := schemaType(s); typ {
	case "object":
		m := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			m[k] = sample(t, root, p.(map[string]any))
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			key := "entry"
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				key = samplePattern(t, pn)
			}
			m[key] = sample(t, root, ap)
		}
		return m
	case "array":
		return []any{sample(t, root, s["items"].(map[string]any))}
	case "string":
		if _, ok := s["pattern"]; ok {
			return samplePattern(t, s)
		}
		return "x"
	case "integer":
		if m, ok := s["minimum"].(float64); ok && m != 0 {
			return int(m)
		}
		return 1
	case "number":
		lo, _ := s["minimum"].(float64)
		if hi, ok := s["exclusiveMaximum"].(float64); ok {
			return (lo + hi) / 2
		}
		return lo + 0.5
	case "boolean":
		return true
	default:
		t.Fatalf("sample: no value for a schema of type %q: %v", typ, s)
		return nil
	}
}

// schemaType is the type of s, the first but null of a list; object for a
// schema of properties without a type.
func schemaType(s map[string]any) string {
	switch typ := s["type"].(type) {
	case string:
		return typ
	case []any:
		for _, x := range typ {
			if x != "null" {
				return x.(string)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func samplePattern(t *testing.T, s map[string]any) string {
	t.Helper()
	pat, _ := s["pattern"].(string)
	v, ok := samplePatterns[pat]
	if !ok {
		t.Fatalf("samplePatterns has no value for the pattern %q: add one", pat)
	}
	return v
}

// positions records, by position in the manifest, the path of the values
// written there, and of the keys (path + " (key)").
func positions(t *testing.T, root, s map[string]any, n *yaml.Node, path string, at map[Pos][]string) {
	s = resolve(t, root, s)
	at[posOf(n)] = append(at[posOf(n)], path)
	props, _ := s["properties"].(map[string]any)
	ap, _ := s["additionalProperties"].(map[string]any)
	switch n.Kind {
	case yaml.MappingNode:
		for _, kv := range pairs(n) {
			p, sub := join(path, kv.key.Value), props[kv.key.Value]
			if sub == nil {
				p, sub = path+".*", ap
			}
			at[posOf(kv.key)] = append(at[posOf(kv.key)], p+" (key)")
			positions(t, root, sub.(map[string]any), kv.val, p, at)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			positions(t, root, s["items"].(map[string]any), item, path+"[]", at)
		}
	}
}

// filled checks that v and everything under it holds a value, read from
// the place its path names.
func filled(v reflect.Value, path string, at map[Pos][]string, problems *[]string) {
	fail := func(format string, args ...any) {
		*problems = append(*problems, fmt.Sprintf("%s: ", path)+fmt.Sprintf(format, args...))
	}
	switch typ := v.Type(); {
	case typ == anyType:
		if v.IsNil() {
			fail("not read")
		}
	case isLeaf(typ):
		leafFrom(v, path, path, at, fail)
	case typ.Kind() == reflect.Pointer:
		if v.IsNil() {
			fail("not read")
			return
		}
		filled(v.Elem(), path, at, problems)
	case typ.Kind() == reflect.Slice:
		if v.Len() == 0 {
			fail("not read")
		}
		p := path + "[]"
		if isEntry(typ.Elem()) {
			p = path + ".*"
		}
		for i := range v.Len() {
			filled(v.Index(i), p, at, problems)
		}
	case typ.Kind() == reflect.Struct:
		for i := range typ.NumField() {
			switch tag := typ.Field(i).Tag.Get("yaml"); tag {
			case "-":
			case ",key":
				leafFrom(v.Field(i), path, path+" (key)", at, fail)
			case ",value":
				filled(v.Field(i), path, at, problems)
			case ",pos":
				want := path + " (key)"
				if strings.HasSuffix(path, "[]") {
					want = path
				}
				if pos := v.Field(i).Interface().(Pos); !slices.Contains(at[pos], want) {
					fail("%s is at %v, where the manifest has %q, not %s", typ.Field(i).Name, pos, at[pos], want)
				}
			default:
				filled(v.Field(i), join(path, tag), at, problems)
			}
		}
	}
}

// leafFrom checks that the Str, Int, Float or Bool v holds a value, and
// that its position is that of want.
func leafFrom(v reflect.Value, path, want string, at map[Pos][]string, fail func(string, ...any)) {
	if v.FieldByName("Value").IsZero() {
		fail("no value read")
	}
	if pos := v.FieldByName("Pos").Interface().(Pos); !slices.Contains(at[pos], want) {
		fail("read from %v, where the manifest has %q, not %s", pos, at[pos], want)
	}
}
