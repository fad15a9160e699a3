package schema_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acemq/acemq-go/internal/gen/schema"
)

// A broken schema is reported at its file and a pointer into it, with the
// one keyword that is wrong: never the compiler's internal URI, the
// metaschema's allOf groups, or # for an Avro field. Each case's errors,
// exactly, one a line.
func TestBrokenSchemaMessages(t *testing.T) {
	const f = `{"name":"a","type":"int"},{"name":"b","type":"int"},{"name":"c","type":"int"},` // fields 0-2
	tests := []struct {
		name   string
		format schema.Format
		schema string
		want   string
	}{
		{"json keyword of the wrong type", schema.JSONSchema,
			`{"type":"object","properties":{"notes":{"type":"string","maxLength":"500"}}}`,
			`schemas/refund.json:1:69: #/properties/notes/maxLength: must be an integer, got the string "500"`},
		{"json unknown type", schema.JSONSchema,
			`{"type":"object","properties":{"notes":{"type":"strin"}}}`,
			`schemas/refund.json:1:48: #/properties/notes/type: must be one of "array", "boolean", "integer", "null", "number", "object", "string", got the string "strin" (did you mean "string"?)`},
		{"json pattern Go cannot compile", schema.JSONSchema,
			`{"type":"object","properties":{"code":{"type":"string","pattern":"(?<=x)a"}}}`,
			"schemas/refund.json:1:66: #/properties/code/pattern: must be a regular expression Go's regexp accepts (RE2 syntax: no look-around, no backreferences), got the string \"(?<=x)a\": invalid named capture: `(?<=x)a`"},
		{"json patternProperties key Go cannot compile", schema.JSONSchema,
			`{"type":"object","patternProperties":{"a(?!b)":{"type":"string"}}}`,
			"schemas/refund.json:1:48: #/patternProperties/a(?!b): the property name \"a(?!b)\" is not a regular expression Go's regexp accepts (RE2 syntax: no look-around, no backreferences): invalid or unsupported Perl syntax: `(?!`"},
		{"json two places, each reported", schema.JSONSchema,
			`{"type":"object","required":"id","$defs":{"money":5}}`,
			"schemas/refund.json:1:29: #/required: must be an array, got the string \"id\"\n" +
				`schemas/refund.json:1:51: #/$defs/money: must be a schema (an object or a boolean), got the number 5`},
		{"json draft 7 bound below zero", schema.JSONSchema,
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"notes":{"type":"string","maxLength":-1}}}`,
			`schemas/refund.json:1:121: #/properties/notes/maxLength: must be at least 0, got the number -1`},
		{"json required listing a name twice", schema.JSONSchema,
			`{"type":"object","properties":{"id":{"type":"string"}},"required":["id","id"]}`,
			`schemas/refund.json:1:67: #/required: must list each value once, got the string "id" twice (at 0 and 1)`},
		{"json $dynamicRef to no anchor, named as written", schema.JSONSchema,
			`{"type":"object","properties":{"a":{"$dynamicRef":"#nope"}}}`,
			`schemas/refund.json:1:51: #/properties/a/$dynamicRef: $dynamicRef "#nope": no $anchor "nope" in schemas/refund.json; fix the reference`},
		{"avro field type misspelt", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":"strnig"}]}`,
			`schemas/refund.avsc:1:145: #/fields/3/type: type "strnig" is neither an Avro primitive nor a named type defined in this file (did you mean "string"?)`},
		{"avro field type not a type", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":5}]}`,
			`schemas/refund.avsc:1:145: #/fields/3/type: must be a type: a name ("string", a named type), a union (an array of types) or an object ("type": "record", ...), got the number 5`},
		{"avro array without items", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":{"type":"array"}}]}`,
			`schemas/refund.avsc:1:145: #/fields/3/type: an array needs "items", the type of its elements`},
		{"avro field without a type", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes"}]}`,
			`schemas/refund.avsc:1:122: #/fields/3: the field "notes" has no "type"`},
		{"avro default of another type", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":"int","default":"x"}]}`,
			`schemas/refund.avsc:1:161: #/fields/3/default: the default "x" of the field "notes" is not an int (a whole number of 32 bits); fix it, or remove the default`},
		{"avro union default of the second branch", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":["null","string"],"default":"none"}]}`,
			`schemas/refund.avsc:1:173: #/fields/3/default: the default "none" of the field "notes" does not match the union's first branch "null" (a union's default is a value of its first branch: list the branch of the default first); fix it, or remove the default`},
		{"avro enum default not a symbol", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"reason","type":{"type":"enum","name":"Reason","symbols":["LATE","BROKEN"],"default":"BROKN"}}]}`,
			`schemas/refund.avsc:1:215: #/fields/3/type/default: the default "BROKN" is not one of the symbols (did you mean "BROKEN"?)`},
		{"avro record default with a field of another type", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"money","type":{"type":"record","name":"Money","fields":[{"name":"cents","type":"long"}]},"default":{"cents":"0"}}]}`,
			`schemas/refund.avsc:1:230: #/fields/3/default: the default {"cents":"0"} of the field "money" is not a record of its fields: its field "cents" ("0") is not a long (a whole number of 64 bits); fix it, or remove the default`},
		{"avro default hamba refuses, placed by the field it names", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"ratio","type":"float","default":"NaN"}]}`,
			`schemas/refund.avsc:1:163: #/fields/3/default: not a valid default: invalid default for field ratio. <nil> not a float; fix it, or remove the default`},
		{"avro enum without symbols", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"reason","type":{"type":"enum","name":"Reason","symbols":[]}}]}`,
			`schemas/refund.avsc:1:187: #/fields/3/type/symbols: an enum needs at least one symbol`},
		{"avro complex type misspelt", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"lines","type":{"type":"arary","items":"string"}}]}`,
			`schemas/refund.avsc:1:153: #/fields/3/type/type: "arary" is not an Avro type (did you mean "array"?)`},
		{"avro field order and doc", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":"string","order":"up","doc":5}]}`,
			"schemas/refund.avsc:1:173: #/fields/3/doc: must be a string, got the number 5\n" +
				`schemas/refund.avsc:1:162: #/fields/3/order: must be "ascending", "descending" or "ignore", got the string "up"`},
		{"avro record without a name", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":{"type":"record","fields":[]}}]}`,
			`schemas/refund.avsc:1:145: #/fields/3/type: the record has no "name": a named type needs one (it names the Go type, and other places refer to it by it)`},
		{"avro field name not a name", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"1notes","type":"string"}]}`,
			`schemas/refund.avsc:1:130: #/fields/3/name: "1notes" is not an Avro name (a letter or _, then letters, digits or _)`},
		{"avro fixed without a size", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"id","type":{"type":"fixed","name":"ID"}}]}`,
			`schemas/refund.avsc:1:142: #/fields/3/type: a fixed needs "size", its length in bytes`},
		{"avro logicalType misspelt", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"at","type":{"type":"long","logicalType":"timestamp-milis"}}]}`,
			`schemas/refund.avsc:1:171: #/fields/3/type/logicalType: "timestamp-milis" is not an Avro logical type (did you mean "timestamp-millis"?); a logical type Avro does not know is read as its underlying type (here long)`},
		{"avro union twice the same type", schema.Avro,
			`{"type":"record","name":"Refund","fields":[` + f + `{"name":"notes","type":["null","string","string"]}]}`,
			`schemas/refund.avsc:1:162: #/fields/3/type/2: the union already has the branch string (at 1): a union holds each type once`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := "schemas/refund.json"
			if tc.format == schema.Avro {
				path = "schemas/refund.avsc"
			}
			_, err := schema.Build([]schema.Input{{Message: "Refund", GoName: "Refund", Path: path, Dir: t.TempDir(), Data: []byte(tc.schema), Format: tc.format}}, nil)
			var lines []string
			for _, e := range errorsOf(t, err) {
				lines = append(lines, e.Error())
			}
			if got := strings.Join(lines, "\n"); got != tc.want {
				t.Errorf("errors:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A document a $ref reaches is checked too, and reported at its own path.
func TestBrokenReferencedSchema(t *testing.T) {
	files := fstest.MapFS{"schemas/money.json": {Data: []byte(`{"type":"object","properties":{"cents":{"type":"integer","minimum":"0"}}}`)}}
	_, err := schema.Build([]schema.Input{{Message: "Refund", GoName: "Refund", Path: "schemas/refund.json", Dir: "schemas", Format: schema.JSONSchema,
		Data: []byte(`{"type":"object","properties":{"amount":{"$ref":"money.json"}}}`)}}, nil, schema.WithFS(files))
	var lines []string
	for _, e := range errorsOf(t, err) {
		lines = append(lines, e.Error())
	}
	want := `schemas/money.json:1:68: #/properties/cents/minimum: must be a number, got the string "0"`
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}

func TestErrorIsOneLine(t *testing.T) {
	e := &schema.Error{Path: "a\nb.json", Pointer: "#/$defs/k\n", Construct: "$ref", Msg: "bad\nthing"}
	if got, want := e.Error(), `"a\nb.json": "#/$defs/k\n": bad\nthing`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	e = &schema.Error{Path: "s/a.json", Pointer: "#/properties/x", Msg: "m"}
	if got, want := e.Error(), "s/a.json: #/properties/x: m"; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
}

// A logicalType Avro does not know, and not a near miss of one it does,
// is legal Avro: the field is its underlying type, no error (the
// specification: "Language implementations must ignore unknown logical
// types"). So are the specification's logical types hamba/avro does not
// implement (timestamp-nanos, big-decimal).
func TestUnknownLogicalTypeFallsBack(t *testing.T) {
	for _, lt := range []string{"my-company-money", "timestamp-nanos", "local-timestamp-nanos", "big-decimal"} {
		typ := "long"
		if lt == "big-decimal" {
			typ = "bytes"
		}
		data := `{"type":"record","name":"Refund","fields":[{"name":"v","type":{"type":"` + typ + `","logicalType":"` + lt + `"}}]}`
		if _, err := schema.Build([]schema.Input{{Message: "Refund", GoName: "Refund", Path: "schemas/refund.avsc", Dir: t.TempDir(), Data: []byte(data), Format: schema.Avro}}, nil); err != nil {
			t.Errorf("logicalType %q: %v, want it read as %s", lt, err, typ)
		}
	}
}
