package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkPrescan asserts that the scan passes body only when the body is
// JSON (encoding/json reads it, jsonParseDoc too), the precheck passes
// its tree and the reference validator passes it; it returns whether the
// scan passed it and whether the precheck did.
func checkPrescan(t testing.TB, what string, sch *jsonschema.Schema, pre *jsonPrecheck, body []byte) (scanned, prechecked bool) {
	t.Helper()
	scanned = pre.scanPasses(body)
	doc, err := jsonParseDoc(body)
	if err != nil {
		if scanned {
			t.Fatalf("%s: the scan passes %q, which is not JSON: %v", what, body, err)
		}
		return false, false
	}
	if _, err := jsonParse(body); err != nil {
		t.Fatalf("%s: jsonParseDoc reads %q, encoding/json refuses it: %v", what, body, err)
	}
	prechecked = pre.verdict(doc) == prePass
	if scanned && !prechecked {
		t.Fatalf("%s: the scan passes %q, the precheck does not", what, body)
	}
	if scanned {
		if err := sch.Validate(doc); err != nil {
			t.Fatalf("%s: the scan passes %q, the reference refuses it: %v", what, body, err)
		}
	}
	return scanned, prechecked
}

// prescanBodies is body as json.Marshal writes it, indented, and with
// every string escaped where it can be (a body the scan reads through
// encoding/json's unquoting).
func prescanBodies(t testing.TB, doc any) [][]byte {
	t.Helper()
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	indented, err := json.MarshalIndent(doc, " ", "\t")
	if err != nil {
		t.Fatal(err)
	}
	escaped := bytes.ReplaceAll(body, []byte(`a`), []byte(`\u0061`))
	return [][]byte{body, indented, escaped}
}

// TestJSONPrescanIsPrecheck: on the precheck's keyword schemas and the
// repository's schemas (the documents of TestJSONPrecheckKeywords and
// TestJSONPrecheckIsReference, written as json.Marshal writes them,
// indented and escaped), the scan passes only bodies the precheck and
// the reference validator pass; and where the scan follows one of the
// repository's schemas it passes every body the precheck passes (on the
// keyword schemas it leaves, on purpose, const, enum and format on an
// object or an array).
func TestJSONPrescanIsPrecheck(t *testing.T) {
	var scannable, scanned, prechecked, bodies int
	// exact: every body the precheck passes, the scan passes too (the
	// repository's schemas hold no const or enum on an object, no format
	// on one)
	run := func(what string, sch *jsonschema.Schema, docs []any, exact bool) {
		pre := newJSONPrecheck(sch)
		if pre.scan {
			scannable++
		}
		for _, doc := range docs {
			for _, body := range prescanBodies(t, doc) {
				bodies++
				s, p := checkPrescan(t, what, sch, pre, body)
				if pre.scan && p {
					prechecked++
					if s {
						scanned++
					} else if exact {
						t.Errorf("%s: the precheck passes %q, the scan does not", what, body)
					}
				}
			}
		}
	}
	var keywordDocs []any
	for _, body := range precheckDocs {
		doc, err := jsonParse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		keywordDocs = append(keywordDocs, doc)
	}
	for _, text := range precheckSchemas {
		sch, err := jsonCompile(text)
		if err != nil {
			t.Fatal(err)
		}
		run(text, sch, keywordDocs, false)
		pre := newJSONPrecheck(sch)
		for _, body := range precheckDocs { // as written, "\xff" and all
			checkPrescan(t, text, sch, pre, []byte(body))
		}
	}
	replacements := []any{nil, "x", "2026-11-30T06:00:00Z", true, []any{}, map[string]any{},
		json.Number("0"), json.Number("-0"), json.Number("1.5"), json.Number("9007199254740993"),
		json.Number("-1e-400"), json.Number("1e400"), json.Number("-7")}
	for _, file := range jsonSchemaFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sch, err := jsonCompile(string(text))
		if err != nil {
			continue
		}
		root, err := jsonParse(text)
		if err != nil {
			t.Fatal(err)
		}
		run(filepath.Base(file), sch, jsonMutations(jsonSubtrees(root, 60), replacements, 120), true)
	}
	t.Logf("%d bodies; %d schemas the scan follows; of their bodies the precheck passes (%d), the scan passes %d",
		bodies, scannable, prechecked, scanned)
	if scannable < 25 || prechecked < 1000 || scanned < prechecked*9/10 {
		t.Fatalf("%d schemas scanned, %d of %d precheck passes taken by the scan: want at least 25 schemas and 90%% of 1000 or more",
			scannable, scanned, prechecked)
	}
}

// TestJSONPrescanRefusesWhatIsNotJSON: the scan never passes a body
// encoding/json refuses, even against the schema true.
func TestJSONPrescanRefusesWhatIsNotJSON(t *testing.T) {
	sch, err := jsonCompile(`true`)
	if err != nil {
		t.Fatal(err)
	}
	pre := newJSONPrecheck(sch)
	for _, body := range []string{
		``, ` `, `{`, `}`, `[`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{'a':1}`, `[1 2]`,
		`01`, `1.`, `.5`, `-`, `-a`, `1e`, `1e+`, `+1`, `0x1`, `1.5e`, `Infinity`, `NaN`,
		`tru`, `nul`, `falsey`, `True`, `"abc`, `"a\"`, "\"a\x01\"", `"\q"`, `"\u12"`, `{"a":"\x"}`,
		`{"a":1}x`, `{"a":1}{}`, `1 2`, `[]]`, "\xef\xbb\xbf{}", "{\"a\":1}\x00",
	} {
		if pre.scanPasses([]byte(body)) {
			t.Errorf("the scan passes %q, which is not JSON", body)
		}
		if _, err := jsonParse([]byte(body)); err == nil {
			t.Errorf("%q: encoding/json reads it, the test expected it not to", body)
		}
	}
	for _, body := range []string{`{}`, ` [ 1 , "a" , { } ] `, `"\u00e9\n"`, `-0.5e-3`, `null`, "\t{\"a\":[true,false]}\r\n"} {
		if !pre.scanPasses([]byte(body)) {
			t.Errorf("the scan does not pass %q against true", body)
		}
	}
}

// TestJSONPrescanLeavesWhatItDoesNotFollow: a schema with a keyword the
// scan does not follow, anywhere in it, is not scanned; and false, a
// repeated key one of whose values fails, a $ref cycle, a number past
// float64 are left to the tree.
func TestJSONPrescanLeavesWhatItDoesNotFollow(t *testing.T) {
	for _, text := range []string{
		`{"oneOf":[{"type":"string"}]}`, `{"properties":{"a":{"not":{"type":"string"}}}}`, `{"if":{"minimum":5}}`,
		`{"items":{"uniqueItems":true}}`, `{"minProperties":1}`, `{"maxProperties":1}`, `{"contains":true}`,
		`{"dependentRequired":{"a":["b"]}}`, `{"dependentSchemas":{"a":{"required":["b"]}}}`,
		`{"unevaluatedProperties":false}`, `{"$defs":{"x":{"oneOf":[true]}},"properties":{"a":{"$ref":"#/$defs/x"}}}`,
	} {
		sch, err := jsonCompile(text)
		if err != nil {
			t.Fatal(err)
		}
		if newJSONPrecheck(sch).scan {
			t.Errorf("%s: the scan follows it", text)
		}
	}
	for _, tc := range []struct{ schema, body string }{
		{`false`, `1`},
		{`{"properties":{"a":{"type":"integer"}}}`, `{"a":"x","a":1}`},
		{`{"properties":{"a":{"type":"integer"}}}`, `{"a":1,"a":"x"}`},
		{`{"required":["a","b"]}`, `{"a":1,"a":2}`},
		{`{"$ref":"#"}`, `1`},
		{`{"minimum":0}`, `1e400`},
		{`{"type":"integer"}`, `1e400`},
		{`{"type":"integer"}`, `1.5`},
		{`{"enum":[[1]]}`, `[1]`},
		{`{"const":{"a":1}}`, `{"a":1}`},
		{`{"properties":{"a":false}}`, `{"a":null}`},
		{`{"additionalProperties":false,"properties":{"a":true}}`, `{"a":1,"b":2}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[true],"additionalItems":false}`, `[1,2]`},
		{`{"maxItems":1}`, `[1,2]`},
		{`{"anyOf":[{"type":"string"},{"maximum":1}]}`, `2`},
		{`{"allOf":[{"type":"number"},{"maximum":1}]}`, `2`},
		{`{"pattern":"^a"}`, `"\u0062a"`},
		{`{"minimum":1}`, `-0`},
		{`{"maximum":9007199254740992}`, `9007199254740993`},
		{`{"minimum":9007199254740992}`, `-9007199254740992`},
		{`{"patternProperties":{"^a":{"type":"string"}}}`, `{"ab":"x","a":1}`},
		{`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":{"type":"boolean"}}`, `{"x-a":true}`},
		{`{"maximum":0}`, `1e-400`},
	} {
		sch, err := jsonCompile(tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		if newJSONPrecheck(sch).scanPasses([]byte(tc.body)) {
			t.Errorf("%s: the scan passes %s", tc.schema, tc.body)
		}
	}
}

// TestJSONPrescanTakesTheOrder: the bench's order, as json.Marshal writes
// it, is passed by the scan (its qty 1 ties minimum 1 without big.Rats).
func TestJSONPrescanTakesTheOrder(t *testing.T) {
	text, err := os.ReadFile("../bench/orders/schemas/order.json")
	if err != nil {
		t.Fatal(err)
	}
	sch, err := jsonCompile(string(text))
	if err != nil {
		t.Fatal(err)
	}
	pre := newJSONPrecheck(sch)
	if !pre.scan {
		t.Fatal("the scan does not follow the order's schema")
	}
	body := `{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C-000042","email":"ada@example.com",` +
		`"placed_at":"2026-11-30T06:00:00.123Z","status":"placed","currency":"EUR","note":"<n> & \"q\"","total":0,` +
		`"items":[{"sku":"SKU-1000","name":"a","qty":1,"price":3.25},{"sku":"SKU-1001","name":"b","qty":2,"price":0}]}`
	if s, _ := checkPrescan(t, "order", sch, pre, []byte(body)); !s {
		t.Fatal("the scan does not pass the order")
	}
	for _, bad := range []string{`"qty":0`, `"qty":1.5`, `"sku":"sku-1"`, `"currency":"EURO"`, `"status":"lost"`, `"total":-0.01`,
		`"order_id":"6f1c2a8e"`, `"placed_at":"2026-13-30T06:00:00Z"`, `"email":"ada@"`, `"customer_id":""`} {
		var mutated string
		for _, key := range []string{`"qty":1`, `"sku":"SKU-1000"`, `"currency":"EUR"`, `"status":"placed"`, `"total":0`,
			`"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f"`, `"placed_at":"2026-11-30T06:00:00.123Z"`,
			`"email":"ada@example.com"`, `"customer_id":"C-000042"`} {
			if bytes.HasPrefix([]byte(bad), []byte(key[:bytes.IndexByte([]byte(key), ':')])) {
				mutated = string(bytes.Replace([]byte(body), []byte(key), []byte(bad), 1))
			}
		}
		if mutated == body || mutated == "" {
			t.Fatalf("%s: no mutation", bad)
		}
		if s, _ := checkPrescan(t, "order", sch, pre, []byte(mutated)); s {
			t.Errorf("the scan passes the order with %s", bad)
		}
		if sch.Validate(mustParse(t, mutated)) == nil {
			t.Errorf("the reference passes the order with %s: the mutation is no violation", bad)
		}
	}
}

func mustParse(t testing.TB, body string) any {
	t.Helper()
	doc, err := jsonParse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// FuzzJSONPrescan: on any body, against precheckSchemas and the bench's
// order schema, the scan passes only what is JSON, what the precheck
// passes and what the reference validator passes.
func FuzzJSONPrescan(f *testing.F) {
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
		s := schemas[int(which)%len(schemas)]
		checkPrescan(t, fmt.Sprintf("schema %d", int(which)%len(schemas)), s.sch, s.pre, body)
	})
}

// TestPrePlainASCIIIsTheByteTest: the eight-bytes-at-a-time test is the
// byte test on every byte value at every place of words and tails.
func TestPrePlainASCIIIsTheByteTest(t *testing.T) {
	byteTest := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c == '\\' || c >= 0x80 {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 17; n++ {
		for at := 0; at < n; at++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte("a"), n)
				b[at] = byte(c)
				if got, want := prePlainASCII(b), byteTest(b); got != want {
					t.Fatalf("%q: %v, the byte test says %v", b, got, want)
				}
				if at > 0 { // a neighbour that borrows: 0x20, 0x5d, 0x00
					for _, d := range []byte{0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f} {
						b[at-1] = d
						if got, want := prePlainASCII(b), byteTest(b); got != want {
							t.Fatalf("%q: %v, the byte test says %v", b, got, want)
						}
					}
				}
			}
		}
	}
}
