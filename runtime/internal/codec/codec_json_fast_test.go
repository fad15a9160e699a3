package codec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
)

// jsonParseCases are bodies jsonParseFast must read as jsonParse does, or
// leave to it: escapes, non-ASCII and bytes that are not UTF-8, numbers at
// the grammar's edges and beyond float64, repeated members, nesting at and
// past encoding/json's limit, trailing data.
var jsonParseCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `"x"`, ` {"a" : [ 1 , 2 ] } `,
	"\t{\"a\":1}\r\n", `{"a":1,"a":2}`, `{"a":{"b":[{"c":null}]}}`, `"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00\ud83d"`, `"é😀"`, "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"\x01\"", "\"\x7f\"",
	`"\x"`, `"\u12"`, `"abc`, `"\`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `01`, `-`, `1.`, `.5`,
	`1e`, `1e+`, `+1`, `-01`, `0x10`, `NaN`, `Infinity`, `tru`, `nul`, `falsey`, `{} {}`, `{}x`, `{}]`, ``, `   `,
	`9007199254740993`, `-9223372036854775809`, `18446744073709551616`, `1e400`, `-1e-400`, `0.1000000000000000000000001`,
	`{"a":9007199254740993,"b":[1e400,-0.0]}`, "{\"a\":1}\x00", "\xef\xbb\xbf{}",
	`[` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10002), strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999),
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000), `[` + strings.Repeat(`{"a":`, 4999) + `1` + strings.Repeat(`}`, 4999) + `]`,
	`{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","total":61.5,"items":[{"sku":"ABC-1","qty":2,"price":10.25}]}`,
}

// TestJSONParseFastIsJSONParse: whatever jsonParseFast reads, jsonParse
// reads to the same tree (json.Number numbers, the same text); whatever it
// leaves, jsonParseDoc answers as jsonParse does, tree or error text. And
// it does read what json.Marshal writes (else it would buy nothing).
func TestJSONParseFastIsJSONParse(t *testing.T) {
	read := 0
	for _, body := range jsonParseCases {
		checkJSONParseFast(t, []byte(body))
		if _, ok := jsonParseFast([]byte(body)); ok {
			read++
		}
	}
	if read < 24 {
		t.Fatalf("the fast parser read %d of the cases, want at least 24", read)
	}
	for _, v := range []any{codecBenchValue(), map[string]any{"a": []any{1.0, "b", nil, true}}, "\u2028<&>"} {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := jsonParseFast(body); !ok {
			t.Fatalf("the fast parser left json.Marshal's %s", body)
		}
		checkJSONParseFast(t, body)
	}
}

// jsonParseFast hands segmentio/encoding bodies nested at most 16 deep,
// counted outside strings only.
func TestJSONParseFastDepth(t *testing.T) {
	for _, tc := range []struct {
		body string
		read bool
	}{
		{strings.Repeat(`[`, 16) + strings.Repeat(`]`, 16), true},
		{strings.Repeat(`[`, 17) + strings.Repeat(`]`, 17), false},
		{`[` + strings.Repeat(`{"a":`, 15) + `1` + strings.Repeat(`}`, 15) + `]`, true},
		{`[` + strings.Repeat(`{"a":`, 16) + `1` + strings.Repeat(`}`, 16) + `]`, false},
		{`["` + strings.Repeat(`[{`, 100) + `"]`, true},
		{`["\"` + strings.Repeat(`[{`, 100) + `"]`, true},
		{`["\\"` + strings.Repeat(`[`, 20) + strings.Repeat(`]`, 20) + `]`, false},
		{strings.Repeat(`[1],`, 1000), false}, // not JSON: trailing data
		{`[` + strings.Repeat(`[1],`, 1000) + `[1]]`, true},
		{`]` + strings.Repeat(`[`, 16) + strings.Repeat(`]`, 16), false},
	} {
		_, read := jsonParseFast([]byte(tc.body))
		if read != tc.read {
			t.Errorf("%.60s: read %v, want %v", tc.body, read, tc.read)
		}
		checkJSONParseFast(t, []byte(tc.body))
	}
}

func checkJSONParseFast(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := jsonParse(body)
	got, gotErr := jsonParseDoc(body)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%q: jsonParseDoc's error %v, jsonParse's %v", body, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: jsonParseDoc read %#v, jsonParse %#v", body, got, want)
	}
	if fast, ok := jsonParseFast(body); ok && (wantErr != nil || !reflect.DeepEqual(fast, want)) {
		t.Fatalf("%q: jsonParseFast read %#v, jsonParse %#v (%v)", body, fast, want, wantErr)
	}
}

// FuzzJSONParseFast: segmentio/encoding never reads a body otherwise than
// encoding/json's Decoder (jsonParse): the same tree, or it leaves the
// body to jsonParse.
func FuzzJSONParseFast(f *testing.F) {
	for _, body := range jsonParseCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkJSONParseFast(t, body) })
}

// jsonSchemaFiles are the repository's JSON Schemas: the corpus
// (docs/schema-mapping.md's 32 public schemas), the goldens' and the
// bench's.
func jsonSchemaFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, glob := range []string{
		"../../../internal/gen/schema/testdata/corpus/jsonschema/*.json",
		"../../../golden/*/schemas/*.json",
		"../../../golden/*/*/schemas/*.json",
		"../../../bench/orders/schemas/*.json",
	} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("%d JSON Schemas found, want the corpus's 32 and the goldens'", len(files))
	}
	return files
}

// TestJSONValidateFastIsReference: across the repository's schemas, the
// codec's validation (jsonParseDoc, then the validator) and the one before
// segmentio/encoding (jsonParse, then the validator) agree on every
// document: accept or refuse, and the jsoncheck.SchemaError's text (every location and
// message), and so does Decode into a map against both (on every fourth). The documents are
// every value inside each schema document (its examples, defaults, enums,
// the subschemas themselves) and mutations of each object: each member
// dropped, each member replaced by null, a string, a bool, an array, an
// object and numbers at float64's edges (-0, 2^53+1, -1e-400, 1e400, a
// 26-digit decimal).
func TestJSONValidateFastIsReference(t *testing.T) {
	replacements := []any{nil, "x", "2026-11-30T06:00:00Z", true, []any{}, map[string]any{},
		json.Number("0"), json.Number("-0"), json.Number("1.5"), json.Number("9007199254740993"),
		json.Number("-1e-400"), json.Number("1e400"), json.Number("0.1000000000000000000000001"), json.Number("-7")}
	var compiled, accepted, refused, fast int
	for _, file := range jsonSchemaFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewJSONCodec(string(text))
		if err != nil {
			continue // external $refs: not the runtime's
		}
		compiled++
		jc := c.(*jsonCodec)
		root, err := jsonParse(text)
		if err != nil {
			t.Fatal(err)
		}
		docs := jsonMutations(jsonSubtrees(root, 200), replacements, 400)
		for i, doc := range docs {
			body, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			old, err := jsonParse(body)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := jsonParseFast(body); ok {
				fast++
			}
			oldErr := fmt.Sprint(jc.validate(old))
			newErr := fmt.Sprint(jc.validateBody(body))
			if oldErr != newErr {
				t.Fatalf("%s, %s: validated before %q, now %q", filepath.Base(file), body, oldErr, newErr)
			}
			if oldErr == "<nil>" {
				accepted++
			} else {
				refused++
			}
			if i%4 != 0 {
				continue // Decode, which repeats the validation, on every fourth
			}
			var before, after map[string]any
			beforeErr := fmt.Sprint(jsonDecodeBefore(jc, body, &before))
			afterErr := fmt.Sprint(c.Decode(t.Context(), body, &after))
			if beforeErr != afterErr || !reflect.DeepEqual(before, after) {
				t.Fatalf("%s, %s: decoded before %q %v, now %q %v", filepath.Base(file), body, beforeErr, before, afterErr, after)
			}
		}
	}
	t.Logf("%d schemas, %d documents accepted, %d refused by both; %d read by segmentio/encoding", compiled, accepted, refused, fast)
	if compiled < 35 || accepted < 800 || refused < 5000 || fast < (accepted+refused)*9/10 {
		t.Fatalf("%d schemas compiled, %d documents accepted, %d refused: the comparison is too thin", compiled, accepted, refused)
	}
}

// jsonDecodeBefore is the reference Decode before segmentio/encoding:
// encoding/json's Decoder, the validator, json.Unmarshal.
func jsonDecodeBefore(c *jsonCodec, body []byte, v any) error {
	doc, err := jsonParse(body)
	if err != nil {
		return err
	}
	if err := c.validate(doc); err != nil {
		return err
	}
	return jsonUnmarshal(body, v)
}

// jsonSubtrees is doc and the values inside it, at most limit of them,
// breadth first.
func jsonSubtrees(doc any, limit int) []any {
	out := []any{doc}
	for i := 0; i < len(out) && len(out) < limit; i++ {
		switch v := out[i].(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapKeys(v)) {
				out = append(out, v[k])
			}
		case []any:
			out = append(out, v...)
		}
	}
	return out[:min(len(out), limit)]
}

// jsonMutations is docs, and for each object among them, copies with each
// member dropped and with each member replaced by each replacement; at most
// limit documents.
func jsonMutations(docs []any, replacements []any, limit int) []any {
	out := slices.Clone(docs)
	for _, d := range docs {
		obj, ok := d.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range slices.Sorted(mapKeys(obj)) {
			out = append(out, jsonWith(obj, k, nil, true))
			for _, r := range replacements {
				out = append(out, jsonWith(obj, k, r, false))
			}
			if len(out) >= limit {
				return out[:limit]
			}
		}
	}
	return out
}

func jsonWith(obj map[string]any, key string, v any, drop bool) map[string]any {
	c := make(map[string]any, len(obj))
	for k, x := range obj {
		c[k] = x
	}
	if drop {
		delete(c, key)
	} else {
		c[key] = v
	}
	return c
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The tree jsonParseFast reads shares the body's bytes (segmentio's
// DontCopyString and DontCopyNumber): nothing of it may outlive the call
// that validated it. A jsoncheck.SchemaError that names the offending values keeps
// its text when the body is overwritten afterwards (amqp091-go hands each
// delivery's body over, a publisher's body is the caller's).
func TestSchemaErrorOutlivesTheBody(t *testing.T) {
	c := codecMustJSON(t, `{"type":"object","properties":{
		"sku":{"type":"string","pattern":"^[A-Z]+$"},
		"code":{"enum":["A","B"]},
		"n":{"const":5},
		"tags":{"type":"array","items":{"type":"string","maxLength":2}}}}`)
	body := []byte(`{"sku":"lower-case","code":"zzz","n":7.25,"tags":["ok","toolong"]}`)
	var v map[string]any
	err := c.Decode(context.Background(), body, &v)
	var se *jsoncheck.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Decode: %v, want a *jsoncheck.SchemaError", err)
	}
	text := err.Error()
	for _, want := range []string{"lower-case", "/sku", "/tags/1"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the error %q does not name %q", text, want)
		}
	}
	violations := slices.Clone(se.Violations)
	for i := range body {
		body[i] = 'X'
	}
	if got := err.Error(); got != text {
		t.Fatalf("the error changed with the body:\n was %q\n now %q", text, got)
	}
	if !reflect.DeepEqual(se.Violations, violations) {
		t.Fatalf("the violations changed with the body: %v, were %v", se.Violations, violations)
	}
}
