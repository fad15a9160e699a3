package rt

// This file is copied next to the code generated from names.json (see
// roundtrip_test.go in internal/gen/schema) and run as a test.

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compile(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(file, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// A value built from the generated types marshals to a document the
// reference validator accepts, with every property under its own name.
func TestNamesMarshalValid(t *testing.T) {
	s := compile(t, "names.json")
	v := Names{
		Type: "t", Func: 1, X9lives: true, FirstName: "a", FirstName2: ptr("b"), X名前: "n", X: "d",
		Schema: ptr("s"), AB: ptr("ab"), Map: map[string]int64{"k": 1},
		When: ptr(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)), Kind: ptr(NamesKindGoGenerate),
		Nested: &NamesNested{Range: ptr("r")}, List: []NamesItemType{{ID: "6f1c8e2a-0b7d-4c5e-9a3f-2d1e0c9b8a7f"}},
		Raw: json.RawMessage(`{"any":[1,"two"]}`),
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, data); err != nil {
		t.Fatalf("%s\n%v", data, err)
	}
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	for _, k := range []string{"type", "func", "9lives", "first-name", "first_name", "名前", "-", "$schema", "a b", "kind", "raw"} {
		if _, ok := m[k]; !ok {
			t.Errorf("property %q missing from %s", k, data)
		}
	}
	for _, k := range []NamesKind{NamesKindGoGenerate, NamesKindX, NamesKindABC, NamesKindX2, NamesKindDefault, NamesKindX9, NamesKindKind} {
		w := v
		w.Kind = &k
		data, _ := json.Marshal(w)
		if err := validate(t, s, data); err != nil {
			t.Errorf("kind %q: %v", k, err)
		}
	}
}

// A valid document decodes into the generated types and encodes back to
// the same JSON; absent optional properties stay absent.
func TestNamesUnmarshal(t *testing.T) {
	s := compile(t, "names.json")
	doc := []byte(`{"type":"t","func":2,"9lives":false,"first-name":"f","名前":"n","-":"dash","nested":null,"kind":"*/","list":[{"id":"6f1c8e2a-0b7d-4c5e-9a3f-2d1e0c9b8a7f"}],"raw":[1,{"x":null}]}`)
	if err := validate(t, s, doc); err != nil {
		t.Fatal(err)
	}
	var v Names
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	if v.X != "dash" || v.Kind == nil || *v.Kind != NamesKindX || v.FirstName2 != nil {
		t.Fatalf("decoded %+v", v)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(doc, &a)
	_ = json.Unmarshal(out, &b)
	delete(a.(map[string]any), "nested") // null and absent are one nil pointer
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip changed the document:\nin  %s\nout %s", doc, out)
	}
	if err := validate(t, s, out); err != nil {
		t.Fatal(err)
	}
}
