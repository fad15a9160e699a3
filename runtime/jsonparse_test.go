package runtime

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// jsonParseCases are bodies the fast parser must read as jsonParse does,
// or leave to it: escapes, non-ASCII and bytes that are not UTF-8, numbers
// at the grammar's edges, repeated members, nesting, trailing data.
var jsonParseCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `"x"`, ` {"a" : [ 1 , 2 ] } `,
	`{"a":1,"a":2}`, `{"a":{"b":[{"c":null}]}}`, `"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`, `"\ud83d"`, `"é😀"`,
	"\"\xff\"", "\"a\xc3\"", "\"\x01\"", `"\x"`, `"\u12"`, `"abc`, `"\`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`,
	`{1:2}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `falsey`, `{} {}`, `{}x`, ``, `   `,
	`[` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10002), strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999),
	`{"order_id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","total":61.5,"items":[{"sku":"ABC-1","qty":2,"price":10.25}]}`,
}

// TestJSONParseFastIsJSONParse: whatever jsonParseFast reads, jsonParse
// reads to the same tree (json.Number for numbers); whatever it leaves,
// jsonParseDoc answers as jsonParse does, tree or error text.
func TestJSONParseFastIsJSONParse(t *testing.T) {
	read := 0
	for _, body := range jsonParseCases {
		checkJSONParseFast(t, []byte(body))
		if _, ok := jsonParseFast([]byte(body)); ok {
			read++
		}
	}
	if read < 15 {
		t.Fatalf("the fast parser read %d of the valid cases, want at least 15", read)
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

// FuzzJSONParseFast: the fast parser never reads a body otherwise than
// jsonParse.
func FuzzJSONParseFast(f *testing.F) {
	for _, body := range jsonParseCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkJSONParseFast(t, body) })
}
