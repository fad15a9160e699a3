package schema_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/gen/schema"
)

// errorsOf returns every *schema.Error in err.
func errorsOf(t *testing.T, err error) []*schema.Error {
	t.Helper()
	if err == nil {
		t.Fatal("Build succeeded; want an error")
	}
	var out []*schema.Error
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	for _, e := range list {
		var se *schema.Error
		if !errors.As(e, &se) {
			t.Fatalf("not a *schema.Error: %v", e)
		}
		out = append(out, se)
	}
	return out
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name      string
		format    schema.Format
		schema    string
		pointers  []string
		construct string
		msg       string
	}{
		{"avro type from another file", schema.Avro, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"p","type":{"type":"array","items":"com.x.Position"}}]}`,
			[]string{"#/fields/1/type/items"}, "named type reference", `type "com.x.Position" is not defined in this file`},
		{"avro types from other files, all reported", schema.Avro, `{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":"A"},{"name":"r","type":{"type":"record","name":"In","fields":[]}},{"name":"b","type":["null","In","n.B"]},{"name":"c","type":{"type":"map","values":"x.C"}}]}`,
			[]string{"#/fields/0/type", "#/fields/2/type/2", "#/fields/3/type/values"}, "named type reference", "is not defined in this file"},
		{"avro type named as JSON Schema names it", schema.Avro, `{"type":"record","name":"R","fields":[{"name":"n","type":"integer"},{"name":"b","type":"bool"}]}`,
			[]string{"#/fields/0/type", "#/fields/1/type"}, "named type reference", `is neither an Avro primitive nor a named type defined in this file (did you mean "`},
		{"avro record without fields", schema.Avro, `{"type":"record","name":"R"}`, []string{"#"}, "record", `the record has no "fields"`},
		{"avro not json", schema.Avro, `{"type":`, []string{"#"}, "json", "not valid JSON"},
		{"avro union branches that decode alike", schema.Avro, `{"type":"record","name":"R","fields":[{"name":"u","type":[{"type":"int","logicalType":"date"},{"type":"long","logicalType":"timestamp-millis"}]}]}`,
			[]string{"#/fields/0/type/1"}, "union branch long.timestamp-millis", "both decode to Go time.Time"},
		{"json external refs, all reported", schema.JSONSchema, `{"type":"object","properties":{"a":{"$ref":"common/a.json"},"b":{"$ref":"https://example.com/b.json#/x"}}}`,
			[]string{"#/properties/a/$ref", "#/properties/b/$ref"}, "$ref", "add that document to the manifest or beside this file"},
		{"json dangling pointer", schema.JSONSchema, `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`,
			[]string{"#/properties/a/$ref"}, "$ref", "has nothing at #/$defs/missing"},
		{"json property a tag cannot name", schema.JSONSchema, `{"type":"object","properties":{"a\"b":{"type":"string"}}}`,
			[]string{"#/properties/a\"b"}, "property name", "cannot be named in a Go struct tag"},
		{"json ref to itself", schema.JSONSchema, `{"$ref":"#"}`, []string{"#/$ref"}, "$ref", "starts a chain of $refs that comes back to #"},
		{"json ref loop through defs", schema.JSONSchema, `{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
			[]string{"#/$defs/a/$ref"}, "$ref", "starts a chain of $refs that comes back to #/$defs/a"},
		{"json property ref to itself", schema.JSONSchema, `{"type":"object","properties":{"x":{"$ref":"#/properties/x"}}}`,
			[]string{"#/properties/x/$ref"}, "$ref", "starts a chain of $refs that comes back to #/properties/x"},
		{"json $dynamicRef whose anchor two schemas declare", schema.JSONSchema, `{"$dynamicAnchor":"n","type":"object","properties":{"x":{"$dynamicRef":"#n"}},"$defs":{"other":{"$id":"https://e.com/o","$dynamicAnchor":"n","type":"string"}}}`,
			[]string{"#/properties/x/$dynamicRef"}, "$dynamicRef", `2 schemas declare "$dynamicAnchor": "n"`},
		{"json $recursiveRef with two anchors", schema.JSONSchema, `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"x":{"$recursiveRef":"#"}},"$defs":{"o":{"$id":"https://e.com/o","$recursiveAnchor":true,"type":"object"}}}`,
			[]string{"#/properties/x/$recursiveRef"}, "$recursiveRef", `2 schemas say "$recursiveAnchor": true`},
		{"json keyword typo", schema.JSONSchema, `{"type":"object","properties":{"q":{"type":"integer","minimun":1,"x-unit":"pcs"},"format":{"type":"string"}}}`,
			[]string{"#/properties/q/minimun"}, "keyword", `unknown keyword "minimun" (did you mean "minimum"?)`},
		{"json format typo", schema.JSONSchema, `{"type":"object","properties":{"at":{"type":"string","format":"datetime"}},"$defs":{"d":{"type":"string","format":"emial"}}}`,
			[]string{"#/properties/at/format", "#/$defs/d/format"}, "format", `unknown format "`},
		{"json unknown type", schema.JSONSchema, `{"type":"object","properties":{"a":{"type":"strng"}}}`,
			[]string{"#/properties/a/type"}, "type", `got the string "strng" (did you mean "string"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gen(t, tc.format, "Msg", tc.schema)
			errs := errorsOf(t, err)
			if len(errs) != len(tc.pointers) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tc.pointers), err)
			}
			for i, e := range errs {
				if e.Pointer != tc.pointers[i] || e.Construct != tc.construct || !strings.Contains(e.Msg, tc.msg) {
					t.Errorf("error %d = %+v; want pointer %q, construct %q, message with %q", i, e, tc.pointers[i], tc.construct, tc.msg)
				}
				if at := fmt.Sprintf("%s:%d:%d: %s: ", e.Path, e.Line, e.Col, e.Pointer); e.Line == 0 || !strings.HasPrefix(e.Error(), at) {
					t.Errorf("Error() = %q", e.Error())
				}
			}
		})
	}
}

func TestReservedAndRootNames(t *testing.T) {
	in := []schema.Input{
		{Message: "Orders", GoName: "Orders", Path: "a.avsc", Format: schema.Avro,
			Data: []byte(`{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"x","type":{"type":"record","name":"Publisher","fields":[]}},{"name":"y","type":{"type":"record","name":"Placed","fields":[]}}]}`)},
		{Message: "OrdersPlaced", GoName: "OrdersPlaced", Path: "b.json", Format: schema.JSONSchema, Data: []byte(`{}`)},
	}
	// A nested type (named <Message><Short>) may not take a reserved name
	// nor a message's: each is an error, never a silent qualification.
	_, err := schema.Build(in, []string{"Topology", "OrdersPublisher"})
	if got, want := fmt.Sprint(err), "the Avro record com.acme.Publisher becomes the Go name OrdersPublisher, which a declaration of the generated package has too\n"+
		`the Avro record com.acme.Placed becomes the Go name OrdersPlaced, which message "OrdersPlaced" has too`; got != want {
		t.Errorf("error\n%s\nwant\n%s", got, want)
	}
	var clash *schema.NameClash
	if !errors.As(err, &clash) || clash.Suggest != `"com.acme.Publisher": ComAcmePublisher` || clash.B.Message != "Orders" || clash.A.Message != "" {
		t.Errorf("clash %+v", clash)
	}
	u, err := schema.Build(in, []string{"Topology", "OrdersPublisher"}, schema.WithTypeNames(map[string]string{"com.acme.Publisher": "ComAcmePublisher", "com.acme.Placed": "ComAcmePlaced", "com.nope.X": "X"}))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(u.UnusedTypeNames) != "[com.nope.X]" {
		t.Errorf("unused type names %v", u.UnusedTypeNames)
	}
	src, err := render("p", u)
	if err != nil {
		t.Fatal(err)
	}
	assertHas(t, src, "type Orders struct", "X ComAcmePublisher", "type ComAcmePublisher struct", "Y ComAcmePlaced")
	if u.Roots["Orders"] == nil || u.Roots["Orders"].Name != "Orders" {
		t.Errorf("root = %+v", u.Roots["Orders"])
	}
	_, err = schema.Build([]schema.Input{{Message: "M", GoName: "Topology", Path: "m.json", Format: schema.JSONSchema, Data: []byte(`{}`)}}, []string{"Topology"})
	errs := errorsOf(t, err)
	if errs[0].Construct != "name" || !strings.Contains(errs[0].Msg, "go_name") {
		t.Errorf("reserved root name: %v", err)
	}
}

// Nested Avro types are named after their message, so messages whose
// schemas each define an enum Kind and a record Line (in one namespace or
// in many) get types of their own, never a clash; type_go_names naming a
// full name gives every identical definition of it one shared type, and
// a different definition under that name is an error.
func TestSharedAvroTypesAcrossInputs(t *testing.T) {
	line := `{"type":"record","name":"Line","namespace":"com.acme","fields":[{"name":"sku","type":"string"}]}`
	in := []schema.Input{
		{Message: "A", GoName: "A", Path: "a.avsc", Format: schema.Avro, Data: []byte(`{"type":"record","name":"A","fields":[{"name":"l","type":` + line + `}]}`)},
		{Message: "B", GoName: "B", Path: "b.avsc", Format: schema.Avro, Data: []byte(`{"type":"record","name":"B","fields":[{"name":"l","type":` + line + `}]}`)},
		{Message: "C", GoName: "C", Path: "c.avsc", Format: schema.Avro, Data: []byte(`{"type":"record","name":"C","fields":[{"name":"l","type":{"type":"record","name":"Line","namespace":"com.acme","fields":[{"name":"n","type":"int"}]}}]}`)},
	}
	u, err := schema.Build(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := render("p", u)
	if err != nil {
		t.Fatal(err)
	}
	assertHas(t, src, "L ALine", "type ALine struct", "L BLine", "type BLine struct", "L CLine", "type CLine struct")

	// Named by its full name: one type for A and B; C's definition
	// differs, an error whatever the order, and its place names it.
	shared := map[string]string{"com.acme.Line": "Line"}
	for _, order := range [][]schema.Input{in, {in[2], in[1], in[0]}} {
		_, err := schema.Build(order, nil, schema.WithTypeNames(shared))
		const want = `c.avsc:1:58: #/fields/0/type: the Avro record com.acme.Line is defined twice, differently (in the schemas of messages "A" and "C"); ` +
			`define it once the same way, or give this one its own Go name in type_go_names: "c.avsc#/fields/0/type": CLine`
		if fmt.Sprint(err) != want {
			t.Errorf("error\n%v\nwant\n%s", err, want)
		}
	}
	shared["c.avsc#/fields/0/type"] = "CLine"
	u, err = schema.Build(in, nil, schema.WithTypeNames(shared))
	if err != nil {
		t.Fatal(err)
	}
	src, err = render("p", u)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(src, "type Line struct"); n != 1 {
		t.Errorf("the identical record Line is declared %d times", n)
	}
	assertHas(t, src, "L Line", "L CLine", "type CLine struct")
	if len(u.UnusedTypeNames) != 0 {
		t.Errorf("unused type names %v", u.UnusedTypeNames)
	}
}

func TestDeterministic(t *testing.T) {
	for _, file := range []string{"avro/hamba-avro__golden.avsc", "jsonschema/schemastore__kustomization.json", "jsonschema/openlineage__ColumnLineageDatasetFacet.json"} {
		var first string
		for i := 0; i < 5; i++ {
			u, err := buildCorpusFile(t, file)
			if err != nil {
				t.Fatal(err)
			}
			src, err := render("p", u)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = src
			} else if src != first {
				t.Fatalf("%s: output differs between runs", file)
			}
		}
	}
}

// A document whose $refs share subschemas (each level refers to the next
// twice, through allOf, oneOf and items) has 2^30 paths; each schema is
// still mapped once, so Build returns at once instead of never.
func TestSharedRefsDoNotExplode(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	const levels = 30
	for i := 0; i < levels; i++ {
		next := fmt.Sprintf(`{"$ref":"#/$defs/d%d"}`, i+1)
		fmt.Fprintf(&b, `"d%d":{"allOf":[%s,%s],"properties":{"a":{"oneOf":[%s,%s]},"b":{"type":"array","items":%s}}},`, i, next, next, next, next, next)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"object","properties":{"leaf":{"type":"string"}}}}}`, levels)
	type result struct {
		src string
		err error
	}
	done := make(chan result, 1)
	go func() {
		src, err := gen(t, schema.JSONSchema, "Msg", b.String())
		done <- result{src, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		assertHas(t, r.src, "type Msg = MsgD0", "type MsgD0 struct", "Leaf *string", "B []MsgD1")
	case <-time.After(20 * time.Second):
		t.Fatal("Build did not return: shared subschemas are mapped once per path")
	}
}

// An enum's own constants are numbered when two symbols make the same
// words; a constant that would take another declaration's name is a
// NameClash.
func TestEnumConstantNames(t *testing.T) {
	in := []schema.Input{{Message: "M", GoName: "M", Path: "m.json", Format: schema.JSONSchema,
		Data: []byte(`{"type": "object", "properties": {"e": {"enum": ["a-b", "a_b"]}}}`)}}
	u, err := schema.Build(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ty := range u.Types {
		for _, v := range ty.Values {
			got = append(got, v.GoName)
		}
	}
	if fmt.Sprint(got) != "[MEAB MEAB2]" {
		t.Errorf("constants %v, want [MEAB MEAB2]", got)
	}
	in[0].Data = []byte(`{"type": "object", "properties": {"e": {"enum": ["line"]}, "e_line": {"type": "object", "properties": {"x": {"type": "string"}}}}}`)
	_, err = schema.Build(in, nil)
	const want = `the schema at #/properties/e_line in m.json becomes the Go name MELine, which the constant for "line" of the schema at #/properties/e in m.json has too`
	if fmt.Sprint(err) != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
}
