package emit_test

import (
	"testing"

	"github.com/acemq/acemq-go/internal/gen/schema"
)

// Each construct of each schema language, as the Go the emitter writes for
// it: the struct fields and tags, enum constants, union methods, doc lines.

func TestAvroConstructs(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"primitives", `{"type":"record","name":"R","fields":[
			{"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"l","type":"long"},
			{"name":"f","type":"float"},{"name":"d","type":"double"},{"name":"s","type":"string"},{"name":"y","type":"bytes"}]}`,
			[]string{"type Msg struct {", "B bool `avro:\"b\" json:\"b\"`", "I int32 `avro:\"i\" json:\"i\"`", "L int64", "F float32", "D float64", "S string", "Y []byte"}},
		{"enum", `{"type":"record","name":"R","fields":[{"name":"suit","type":{"type":"enum","name":"Suit","symbols":["SPADES","HEARTS","in_play"]}}]}`,
			[]string{"Suit MsgSuit `avro:\"suit\" json:\"suit\"`", "type MsgSuit string", `MsgSuitSpades MsgSuit = "SPADES"`, `MsgSuitHearts MsgSuit = "HEARTS"`, `MsgSuitInPlay MsgSuit = "in_play"`}},
		{"fixed", `{"type":"record","name":"R","fields":[{"name":"h","type":{"type":"fixed","name":"MD5","size":16}}]}`,
			[]string{"H MsgMD5", "type MsgMD5 [16]byte"}},
		{"array and map", `{"type":"record","name":"R","fields":[{"name":"tags","type":{"type":"array","items":"string"}},{"name":"m","type":{"type":"map","values":{"type":"array","items":"long"}}}]}`,
			[]string{"Tags []string", "M map[string][]int64"}},
		{"nullable", `{"type":"record","name":"R","fields":[{"name":"n","type":["null","string"],"default":null},{"name":"a","type":["null",{"type":"array","items":"int"}]},{"name":"m","type":["string","null"]}]}`,
			[]string{"N *string", "// Default: null.", "A []int32", "M *string"}},
		{"nested and recursive", `{"type":"record","name":"Node","fields":[{"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}},{"name":"next","type":["null","Node"]},{"name":"kids","type":{"type":"array","items":"Node"}},{"name":"again","type":"Inner"}]}`,
			[]string{"Inner MsgInner", "type MsgInner struct", "Next *Msg", "Kids []Msg", "Again MsgInner"}},
		{"logical types", `{"type":"record","name":"R","fields":[
			{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
			{"name":"d","type":{"type":"int","logicalType":"date"}},{"name":"t","type":{"type":"int","logicalType":"time-millis"}},
			{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"id","type":{"type":"string","logicalType":"uuid"}},
			{"name":"opt","type":["null",{"type":"long","logicalType":"timestamp-millis"}]}]}`,
			[]string{"TS time.Time", "Us time.Time", "D time.Time", "T time.Duration", "Dec *big.Rat", "ID string", "Opt *time.Time", `"math/big"`, `"time"`}},
		{"general union", `{"type":"record","name":"R","fields":[{"name":"v","type":["null","int","string",{"type":"record","name":"P","fields":[]}]}]}`,
			[]string{"V *MsgV", "type MsgV struct", "Int *int32 `json:\"int,omitempty\"`", "P *MsgP `json:\"P,omitempty\"`", "func (u *MsgV) ToAny() (any, error)", `return &map[string]any{"int": *u.Int}, nil`,
				"func (u *MsgV) FromAny(payload any) error", "case map[string]any:", `case "P":`, "acemqimpl.ConvertAvroBranch(acemqAvroSchema0, []int{0, 3}, g, &x)",
				"case int:", "y := int32(v)", "const acemqAvroSchema0Text ="}},
		{"docs and defaults", `{"type":"record","name":"R","doc":"An order.","fields":[{"name":"q","type":"int","default":1,"doc":"How many."}]}`,
			[]string{"// An order.\ntype Msg struct", "// How many.\n // Default: 1.\n Q int32"}},
		{"namespaces", `{"type":"record","name":"R","namespace":"a","fields":[{"name":"x","type":{"type":"record","name":"Rec","namespace":"b.c","fields":[]}},{"name":"y","type":{"type":"record","name":"Rec","namespace":"d","fields":[{"name":"z","type":"int"}]}}]}`,
			[]string{"X MsgRec", "Y MsgDRec", "type MsgRec struct", "type MsgDRec struct"}},
		{"union named as a record", `{"type":"record","name":"R","fields":[{"name":"deep","type":["null","float",{"type":"record","name":"Deep","fields":[]}]}]}`,
			[]string{"Deep *MsgDeepUnion", "type MsgDeepUnion struct", "Deep *MsgDeep `json:\"Deep,omitempty\"`", "type MsgDeep struct"}},
		{"top-level array", `{"type":"array","items":{"type":"record","name":"Item","fields":[]}}`,
			[]string{"type Msg []MsgItem", "type MsgItem struct"}},
		{"top-level union", `["null",{"type":"record","name":"P","fields":[]}]`,
			[]string{"type Msg = *MsgP"}},
		{"top-level general union", `["int","string"]`,
			[]string{"type Msg = *MsgUnion", "type MsgUnion struct"}},
		{"top-level timestamp", `{"type":"long","logicalType":"timestamp-millis"}`,
			[]string{"type Msg = time.Time"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := gen(t, schema.Avro, "Msg", tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			checkNoAny(t, tc.name, checkSource(t, src))
			assertHas(t, src, tc.want...)
		})
	}
}

func TestJSONSchemaConstructs(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"required and optional", `{"type":"object","required":["id","n"],"properties":{"id":{"type":"string"},"name":{"type":"string"},"n":{"type":"integer"},"x":{"type":"number"},"ok":{"type":"boolean"}}}`,
			[]string{"type Msg struct", "ID string `json:\"id\"`", "Name *string `json:\"name,omitempty\"`", "N int64 `json:\"n\"`", "X *float64 `json:\"x,omitempty\"`", "Ok *bool"}},
		{"enum", `{"type":"object","required":["s"],"properties":{"s":{"enum":["open","in-progress","DONE"]},"o":{"type":"string","enum":["a","b"]},"n":{"enum":[1,2]}}}`,
			[]string{"S MsgS `json:\"s\"`", "type MsgS string", `MsgSOpen MsgS = "open"`, `MsgSInProgress MsgS = "in-progress"`, `MsgSDone MsgS = "DONE"`, "O *MsgO", "N *int64", "// One of 1, 2."}},
		{"arrays", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"pts":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}},"any":{"type":"array"}}}`,
			[]string{"Tags []string `json:\"tags,omitempty\"`", "Pts []MsgPtsItem", "type MsgPtsItem struct", "Any []json.RawMessage"}},
		{"additionalProperties", `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}},"open":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true},"free":{"type":"object"}}}`,
			[]string{"Labels map[string]string", "Open *MsgOpen", "type MsgOpen struct", "Members other than the fields below are allowed", "Free map[string]json.RawMessage"}},
		{"$ref and $defs", `{"type":"object","required":["home"],"properties":{"home":{"$ref":"#/$defs/address"},"work":{"$ref":"#/$defs/address"},"old":{"$ref":"#/definitions/Legacy"}},"$defs":{"address":{"type":"object","properties":{"city":{"type":"string"}}}},"definitions":{"Legacy":{"type":"object","properties":{"v":{"type":"integer"}}}}}`,
			[]string{"Home MsgAddress `json:\"home\"`", "Work *MsgAddress", "type MsgAddress struct", "Old *MsgLegacy", "type MsgLegacy struct"}},
		{"date-time and formats", `{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date-time"},"day":{"type":"string","format":"date"},"id":{"type":"string","format":"uuid"}}}`,
			[]string{"At time.Time `json:\"at\"`", "Day *string", "ID *string"}},
		{"nullable", `{"type":"object","required":["a","b"],"properties":{"a":{"type":["string","null"]},"b":{"type":["array","null"],"items":{"type":"integer"}},"c":{"type":["object","null"],"properties":{"z":{"type":"string"}}}}}`,
			[]string{"A *string `json:\"a\"`", "B []int64 `json:\"b\"`", "C *MsgC `json:\"c,omitempty\"`"}},
		{"oneOf of different kinds stays raw", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}}`,
			[]string{"// One of: string; array. Kept raw: decode it once you know which.", "V json.RawMessage `json:\"v,omitempty\"`"}},
		{"anyOf with null", `{"type":"object","required":["v"],"properties":{"v":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"null"}]}},"$defs":{"P":{"type":"object","properties":{"q":{"type":"string"}}}}}`,
			[]string{"V *MsgP `json:\"v\"`"}},
		{"oneOf of one scalar kind", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","format":"email"},{"type":"string","maxLength":3}]}}}`,
			[]string{"V *string"}},
		{"allOf merges objects", `{"allOf":[{"$ref":"#/$defs/Base"},{"type":"object","required":["extra"],"properties":{"extra":{"type":"integer"}}}],"$defs":{"Base":{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}}}`,
			[]string{"type Msg struct", "ID string `json:\"id\"`", "Extra int64 `json:\"extra\"`"}},
		{"variants merge", `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}}},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"string"}}}]}`,
			[]string{"type Msg struct", "Kind *MsgKind", `MsgKindA MsgKind = "a"`, `MsgKindB MsgKind = "b"`, "X *int64", "Y *string", "It holds the fields of every object variant"}},
		{"true and empty schemas", `{"type":"object","properties":{"a":true,"b":{}}}`,
			[]string{"A json.RawMessage `json:\"a,omitempty\"`", "B json.RawMessage"}},
		{"recursion", `{"type":"object","properties":{"name":{"type":"string"},"parent":{"$ref":"#"},"kids":{"type":"array","items":{"$ref":"#"}}}}`,
			[]string{"Parent *Msg", "Kids []Msg"}},
		{"required recursion is a pointer", `{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","required":["next"],"properties":{"next":{"$ref":"#/$defs/N"}}}}}`,
			[]string{"type Msg = MsgN", "Next *MsgN `json:\"next\"`"}},
		{"top-level array", `{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}`,
			[]string{"type Msg []MsgValueItem", "type MsgValueItem struct"}},
		{"required but undescribed", `{"type":"object","required":["id","any"],"properties":{"id":{"type":"string"}}}`,
			[]string{"ID string `json:\"id\"`", "// Required; the schema does not describe it, so it is kept raw.\n Any json.RawMessage `json:\"any\"`"}},
		{"deprecated", `{"type":"object","properties":{"old":{"type":"string","description":"Use new.","deprecated":true}}}`,
			[]string{"// Use new.\n //\n // Deprecated: the schema marks it deprecated.\n Old *string"}},
		{"integer and number", `{"type":"object","required":["v"],"properties":{"v":{"type":["integer","number"]}}}`,
			[]string{"V float64"}},
		{"static $dynamicRef", `{"$dynamicAnchor":"node","type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$dynamicRef":"#node"}},"first":{"$dynamicRef":"#/$defs/leaf"}},"$defs":{"leaf":{"type":"object","properties":{"v":{"type":"integer"}}}}}`,
			[]string{"Kids []Msg", "First *MsgLeaf", "type MsgLeaf struct"}},
		{"static $recursiveRef", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"kids":{"type":"array","items":{"$recursiveRef":"#"}}}}`,
			[]string{"Kids []Msg"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := gen(t, schema.JSONSchema, "Msg", tc.schema)
			if err != nil {
				t.Fatal(err)
			}
			checkNoAny(t, tc.name, checkSource(t, src))
			assertHas(t, src, tc.want...)
		})
	}
}
