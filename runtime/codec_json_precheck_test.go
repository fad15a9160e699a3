package runtime

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var precheckFull = flag.Bool("precheck.full", false,
	"TestJSONPrecheckIsReference: every schema's documents without a cap (a minute or more under -race)")

// precheckSchemas are schemas written for the precheck's keywords: each
// one the validator's walk treats in a way of its own (drafts, $ref
// siblings, cycles, exact numbers, equality across number texts).
var precheckSchemas = []string{
	`{"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":0,"maximum":10}},"additionalProperties":false}`,
	`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}`,
	`{"type":"number","minimum":0.1,"maximum":0.3}`,
	`{"minimum":9007199254740993}`,
	`{"maximum":9007199254740992}`,
	`{"patternProperties":{"^a":{"type":"string"}}}`,
	`{"maximum":-1e-400}`,
	`{"type":"integer","multipleOf":3}`,
	`{"multipleOf":0.01}`,
	`{"multipleOf":1e-400}`,
	`{"const":1}`,
	`{"const":{"a":[1,"x",null]}}`,
	`{"enum":[1,"1",true,null,[1],{"a":1}]}`,
	`{"type":"array","uniqueItems":true}`,
	`{"type":["string","null"],"minLength":2,"maxLength":3,"pattern":"^a"}`,
	`{"format":"uuid"}`,
	`{"format":"date-time"}`,
	`{"format":"email"}`,
	`{"oneOf":[{"type":"string"},{"type":"integer"},{"minimum":5}]}`,
	`{"anyOf":[{"type":"string","maxLength":1},{"type":"number"}]}`,
	`{"oneOf":[{"type":"number"},{"minimum":0}]}`,
	`{"allOf":[{"type":"object"},{"required":["a"]}]}`,
	`{"not":{"type":"string"}}`,
	`{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}`,
	`{"if":{"minimum":5}}`,
	`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"string"}}}}}`,
	`{"$ref":"#"}`,
	`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","minLength":5}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":0,"exclusiveMinimum":true,"maximum":5,"exclusiveMaximum":true}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","propertyNames":{"maxLength":1}}`,
	`{"propertyNames":{"maxLength":1}}`,
	`{"patternProperties":{"^x-":{"type":"string"}},"properties":{"id":{"type":"integer"}},"additionalProperties":{"type":"boolean"}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
	`{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`,
	`{"$schema":"http://json-schema.org/draft-06/schema#","dependentRequired":{"a":["b"]}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","items":{"type":"integer"}}`,
	`{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":1,"maxItems":3}`,
	`{"contains":{"type":"integer"}}`,
	`{"contains":{"type":"integer"},"minContains":2}`,
	`{"minProperties":1,"maxProperties":2}`,
	`{"properties":{"a":true,"b":false}}`,
	`{"unevaluatedProperties":false,"properties":{"a":true}}`,
	`{"$dynamicRef":"#"}`,
	`false`, `true`,
}

// precheckDocs are documents for precheckSchemas: every kind, numbers at
// and beside the bounds above and past float64, equal numbers in
// different texts.
var precheckDocs = []string{
	`null`, `true`, `false`, `""`, `"a"`, `"ab"`, `"abcd"`, `"ba"`, `"é"`, `"aé"`, "\"a\xff\"",
	`"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f"`, `"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6"`, `"2026-11-30T06:00:00.123Z"`,
	`"2026-13-30T06:00:00Z"`, `"ada@example.com"`, `"ada@"`,
	`0`, `-0`, `0.0`, `1`, `1.0`, `1e0`, `10e-1`, `0.1`, `0.10`, `1e-1`, `0.3`, `0.30000000000000001`, `0.29999999999999999`,
	`0.09999999999999999`, `0.2`, `2`, `3`, `5`, `5.0`, `6`, `9`, `10`, `10.5`, `11`, `-1`, `-1e-400`, `-1e-401`, `1e-400`, `1e400`,
	`9007199254740992`, `9007199254740993`, `9007199254740994`, `9007199254740993.0`, `0.03`, `0.035`, `1.1`, `3e0`, `-9`,
	`12345678901234567890123`, `1e-2`, `0.010`,
	`[]`, `[1]`, `[1,1]`, `[1,1.0]`, `[1,"1"]`, `["a","b"]`, `["a","a"]`, `[{"a":1},{"a":1.0}]`, `[[1],[1]]`, `["a",1]`,
	`["a",1,2]`, `["a","b"]`, `[1,"a"]`, `["a",1,"b"]`, `[1,2,3,4]`, `[[]]`,
	`{}`, `{"a":1}`, `{"a":1.0}`, `{"a":-1}`, `{"a":11}`, `{"a":1,"b":2}`, `{"a":"1"}`, `{"b":1}`, `{"a":[1,"x",null]}`,
	`{"a":[1.0,"x",null]}`, `{"a":[1,"x"]}`, `{"k":"a","x":1}`, `{"k":"a","y":1}`, `{"k":"b","y":1}`, `{"k":"b","x":1}`, `{"x":1}`,
	`{"next":{"next":{"v":"x"}}}`, `{"next":{"next":{"v":1}}}`, `{"x-a":"s","id":1,"z":true}`, `{"x-a":1}`, `{"z":"s"}`, `{"id":1.5}`,
	`{"a":1,"b":1}`, `{"c":1}`, `{"c":1,"d":1}`, `{"ab":1}`, `{"a":true}`, `{"b":true}`, `{"a":1,"b":2,"c":3}`,
}

// checkPrecheck asserts the precheck's verdict on doc is the reference's
// where it gives one, and returns it and whether the reference passes doc.
func checkPrecheck(t testing.TB, what string, sch *jsonschema.Schema, pre *jsonPrecheck, doc any) (preVerdict, bool) {
	t.Helper()
	v := pre.verdict(doc)
	err := sch.Validate(doc)
	switch {
	case v == prePass && err != nil:
		body, _ := json.Marshal(doc)
		t.Fatalf("%s: the precheck passes %s, the reference refuses it: %v", what, body, err)
	case v == preFail && err == nil:
		body, _ := json.Marshal(doc)
		t.Fatalf("%s: the precheck refuses %s, the reference passes it", what, body)
	}
	return v, err == nil
}

// TestJSONPrecheckKeywords: on schemas written for each keyword the
// precheck models (and some it leaves), it passes only what the reference
// passes, refuses only what it refuses, and decides most documents.
func TestJSONPrecheckKeywords(t *testing.T) {
	var counts [3]int
	for _, text := range precheckSchemas {
		sch, err := jsonCompile(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		pre := newJSONPrecheck(sch)
		for _, body := range precheckDocs {
			doc, err := jsonParse([]byte(body))
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			v, _ := checkPrecheck(t, text+" on "+body, sch, pre, doc)
			counts[v]++
		}
	}
	t.Logf("passed %d, refused %d, left %d", counts[prePass], counts[preFail], counts[preUnknown])
	if counts[prePass] < 1200 || counts[preFail] < 1500 || counts[preUnknown] > 700 {
		t.Fatalf("passed %d, refused %d, left %d: want at least 1200 passed and 1500 refused, at most 700 left",
			counts[prePass], counts[preFail], counts[preUnknown])
	}
	// What it must leave: a $ref cycle, unevaluated*, $dynamicRef,
	// minContains, numbers past float64 against a bound.
	for _, tc := range []struct{ schema, doc string }{
		{`{"$ref":"#"}`, `1`},
		{`{"unevaluatedProperties":false,"properties":{"a":true}}`, `{"a":1}`},
		{`{"$dynamicRef":"#"}`, `{}`},
		{`{"contains":{"type":"integer"},"minContains":2}`, `[1,2]`},
		{`{"minimum":0}`, `1e400`},
		{`{"type":"integer"}`, `1e400`},
	} {
		sch, err := jsonCompile(tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := jsonParse([]byte(tc.doc))
		if v := newJSONPrecheck(sch).verdict(doc); v != preUnknown {
			t.Errorf("%s on %s: verdict %d, want it left to the reference", tc.schema, tc.doc, v)
		}
	}
}

// TestJSONPrecheckIsReference: across the repository's schemas (the
// corpus, the goldens', the bench's), the precheck never passes a document
// the reference refuses nor refuses one it passes; the documents are those
// of TestJSONValidateFastIsReference (every value inside each schema and
// its mutations), and the precheck must decide most of the accepted ones.
// -precheck.full lifts the per-schema cap.
func TestJSONPrecheckIsReference(t *testing.T) {
	replacements := []any{nil, "x", "2026-11-30T06:00:00Z", true, []any{}, map[string]any{},
		json.Number("0"), json.Number("-0"), json.Number("1.5"), json.Number("9007199254740993"),
		json.Number("-1e-400"), json.Number("1e400"), json.Number("0.1000000000000000000000001"), json.Number("-7")}
	subtrees, limit := 120, 250
	if *precheckFull {
		subtrees, limit = 400, 5000
	}
	var compiled, accepted, passed, refused, failed int
	for _, file := range jsonSchemaFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := jsonCompile(string(text))
		if err != nil {
			continue // external $refs: not the runtime's
		}
		compiled++
		pre := newJSONPrecheck(sch)
		root, err := jsonParse(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range jsonMutations(jsonSubtrees(root, subtrees), replacements, limit) {
			// the tree as jsonParseDoc reads it (json.Number numbers)
			v, ok := checkPrecheck(t, filepath.Base(file), sch, pre, doc)
			if ok {
				accepted++
				if v == prePass {
					passed++
				}
			} else {
				refused++
				if v == preFail {
					failed++
				}
			}
		}
	}
	t.Logf("%d schemas; %d documents accepted, %d of them passed by the precheck; %d refused, %d of them refused by it too",
		compiled, accepted, passed, refused, failed)
	if compiled < 35 || accepted < 500 || refused < 3000 || passed < accepted/2 {
		t.Fatalf("%d schemas, %d accepted (%d passed by the precheck), %d refused: the comparison is too thin",
			compiled, accepted, passed, refused)
	}
}

// TestJSONPrecheckTakesTheOrder: the bench's order, as json.Marshal writes
// it, is passed by the precheck (else the codec would buy nothing), and
// its mutations agree with the reference.
func TestJSONPrecheckTakesTheOrder(t *testing.T) {
	text, err := os.ReadFile("../bench/orders/schemas/order.json")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := jsonCompile(string(text))
	if err != nil {
		t.Fatal(err)
	}
	pre := newJSONPrecheck(sch)
	body := `{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C-000042","email":"ada@example.com",` +
		`"placed_at":"2026-11-30T06:00:00.123Z","status":"placed","currency":"EUR","note":"n","total":0,` +
		`"items":[{"sku":"SKU-1000","name":"a","qty":1,"price":3.25},{"sku":"SKU-1001","name":"b","qty":2,"price":0}]}`
	doc, err := jsonParseDoc([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := checkPrecheck(t, "order", sch, pre, doc); v != prePass {
		t.Fatalf("the precheck's verdict on the order is %d, want it passed", v)
	}
	for _, m := range jsonMutations(jsonSubtrees(doc, 40), []any{nil, "x", "EURO", json.Number("-0"), json.Number("-1e-400"),
		json.Number("0.5"), json.Number("1.0"), json.Number("1e400"), json.Number("-0.0"), []any{}}, 2000) {
		checkPrecheck(t, "order", sch, pre, m)
	}
	c, err := newJSONCodecReference(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if c.(*jsonCodec).pre != nil {
		t.Fatal("the reference-only codec (WithReferenceValidation) has a precheck")
	}
}

// FuzzJSONPrecheck: on any JSON body, against precheckSchemas and the
// bench's order schema, the precheck's verdict is never the opposite of
// the reference's.
func FuzzJSONPrecheck(f *testing.F) {
	for i, d := range precheckDocs {
		f.Add(uint8(i), []byte(d))
	}
	order, err := os.ReadFile("../bench/orders/schemas/order.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(len(precheckSchemas)), []byte(`{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C","placed_at":"2026-11-30T06:00:00Z","status":"paid","currency":"EUR","total":0,"items":[{"sku":"A-1","name":"a","qty":1,"price":0}]}`))
	texts := append(append([]string{}, precheckSchemas...), string(order))
	type compiled struct {
		sch *jsonschema.Schema
		pre *jsonPrecheck
	}
	schemas := make([]compiled, len(texts))
	for i, text := range texts {
		sch, err := jsonCompile(text)
		if err != nil {
			f.Fatal(err)
		}
		schemas[i] = compiled{sch, newJSONPrecheck(sch)}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		doc, err := jsonParseDoc(body)
		if err != nil {
			return
		}
		s := schemas[int(which)%len(schemas)]
		checkPrecheck(t, fmt.Sprintf("schema %d", int(which)%len(schemas)), s.sch, s.pre, doc)
	})
}
