package compat

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// got runs CheckJSON in full mode and lists "direction path rule".
func got(t *testing.T, old, new string) []string {
	t.Helper()
	ps, err := CheckJSON("M", old, new, ModeFull)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s %s", p.Direction, p.Path, p.Rule))
	}
	return out
}

type ruleCase struct {
	name, old, new string
	want           []string // "direction path rule"; nil: compatible both ways
}

func runCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := got(t, c.old, c.new)
			if !slices.Equal(g, c.want) {
				t.Errorf("old %s\nnew %s\ngot  %q\nwant %q", c.old, c.new, g, c.want)
			}
		})
	}
}

func obj(props string, extra ...string) string {
	s := `{"type":"object","properties":{` + props + `}`
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

func TestJSONIdentical(t *testing.T) {
	s := obj(`"id":{"type":"string","format":"uuid"},"n":{"type":"integer","minimum":0},"tags":{"type":"array","items":{"enum":["a","b"]}}`,
		`"required":["id"]`, `"additionalProperties":false`)
	runCases(t, []ruleCase{{"same", s, s, nil}})
}

func TestJSONRequiredRules(t *testing.T) {
	runCases(t, []ruleCase{
		{"newly required", obj(`"a":{"type":"string"}`), obj(`"a":{"type":"string"}`, `"required":["a"]`),
			[]string{"backward $.a property-newly-required"}},
		{"added as required", obj(``), obj(`"a":{"type":"string"}`, `"required":["a"]`),
			[]string{"backward $.a property-newly-required"}},
		{"required removed", obj(`"a":{"type":"string"}`, `"required":["a"]`), obj(``),
			[]string{"forward $.a property-removed"}},
		{"made optional", obj(`"a":{"type":"string"}`, `"required":["a"]`), obj(`"a":{"type":"string"}`),
			[]string{"forward $.a property-made-optional"}},
		{"optional removed", obj(`"a":{"type":"string"}`), obj(``), nil},
		{"optional added", obj(``), obj(`"a":{"type":"string"}`), nil},
	})
}

func TestJSONClosedRules(t *testing.T) {
	closed := `"additionalProperties":false`
	runCases(t, []ruleCase{
		{"closed", obj(`"a":{}`), obj(`"a":{}`, closed),
			[]string{"backward $ additional-properties-closed"}},
		{"opened", obj(`"a":{}`, closed), obj(`"a":{}`),
			[]string{"forward $ additional-properties-opened"}},
		{"property added to a closed object", obj(`"a":{}`, closed), obj(`"a":{},"b":{}`, closed),
			[]string{"forward $.b property-added"}},
		{"property removed from a closed object", obj(`"a":{},"b":{}`, closed), obj(`"a":{}`, closed),
			[]string{"backward $.b property-removed"}},
		{"additionalProperties schema narrowed", obj(``, `"additionalProperties":{"type":"number"}`), obj(``, `"additionalProperties":{"type":"integer"}`),
			[]string{"backward $.* type-narrowed"}},
		{"unevaluatedProperties", obj(`"a":{}`), obj(`"a":{}`, `"unevaluatedProperties":false`),
			[]string{"backward $ additional-properties-closed"}},
	})
}

func TestJSONTypeRules(t *testing.T) {
	p := func(s string) string { return obj(`"a":` + s) }
	runCases(t, []ruleCase{
		{"narrowed", p(`{"type":"number"}`), p(`{"type":"integer"}`),
			[]string{"backward $.a type-narrowed"}},
		{"widened", p(`{"type":"integer"}`), p(`{"type":"number"}`),
			[]string{"forward $.a type-widened"}},
		{"changed", p(`{"type":"string"}`), p(`{"type":"integer"}`),
			[]string{"backward $.a type-changed", "forward $.a type-changed"}},
		{"null dropped", p(`{"type":["string","null"]}`), p(`{"type":"string"}`),
			[]string{"backward $.a type-narrowed"}},
		{"typed", p(`{}`), p(`{"type":"string"}`),
			[]string{"backward $.a type-narrowed"}},
		{"nested in an array", p(`{"type":"array","items":{"type":"number"}}`), p(`{"type":"array","items":{"type":"integer"}}`),
			[]string{"backward $.a[] type-narrowed"}},
		{"through $ref", `{"$defs":{"x":{"type":"number"}},"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`,
			`{"$defs":{"x":{"type":"integer"}},"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`,
			[]string{"backward $.a type-narrowed"}},
		{"anyOf branch dropped", p(`{"anyOf":[{"type":"string"},{"type":"null"}]}`), p(`{"anyOf":[{"type":"string"}]}`),
			[]string{"backward $.a type-changed"}},
		{"anyOf branch added", p(`{"anyOf":[{"type":"string"}]}`), p(`{"anyOf":[{"type":"string"},{"type":"null"}]}`),
			[]string{"forward $.a type-changed"}},
	})
}

func TestJSONEnumRules(t *testing.T) {
	p := func(s string) string { return obj(`"a":` + s) }
	runCases(t, []ruleCase{
		{"value removed", p(`{"enum":["x","y"]}`), p(`{"enum":["x"]}`),
			[]string{"backward $.a enum-value-removed"}},
		{"value added", p(`{"enum":["x"]}`), p(`{"enum":["x","y"]}`),
			[]string{"forward $.a enum-value-added"}},
		{"enum added", p(`{"type":"string"}`), p(`{"type":"string","enum":["x"]}`),
			[]string{"backward $.a enum-added"}},
		{"enum removed", p(`{"type":"string","enum":["x"]}`), p(`{"type":"string"}`),
			[]string{"forward $.a enum-removed"}},
		{"const changed", p(`{"const":1}`), p(`{"const":2}`),
			[]string{"backward $.a enum-value-removed", "forward $.a enum-value-added"}},
	})
}

func TestJSONBoundRules(t *testing.T) {
	p := func(s string) string { return obj(`"a":` + s) }
	runCases(t, []ruleCase{
		{"minimum raised", p(`{"type":"integer","minimum":0}`), p(`{"type":"integer","minimum":1}`),
			[]string{"backward $.a bound-tightened"}},
		{"minimum lowered", p(`{"type":"integer","minimum":1}`), p(`{"type":"integer","minimum":0}`),
			[]string{"forward $.a bound-loosened"}},
		{"maximum added", p(`{"type":"integer"}`), p(`{"type":"integer","maximum":10}`),
			[]string{"backward $.a bound-tightened"}},
		{"made exclusive", p(`{"type":"number","minimum":0}`), p(`{"type":"number","exclusiveMinimum":0}`),
			[]string{"backward $.a bound-tightened"}},
		{"maxLength lowered", p(`{"type":"string","maxLength":10}`), p(`{"type":"string","maxLength":5}`),
			[]string{"backward $.a bound-tightened"}},
		{"minItems dropped", p(`{"type":"array","minItems":1}`), p(`{"type":"array"}`),
			[]string{"forward $.a bound-loosened"}},
		{"minLength 0 added", p(`{"type":"string"}`), p(`{"type":"string","minLength":0}`), nil},
		{"multipleOf raised", p(`{"type":"integer","multipleOf":2}`), p(`{"type":"integer","multipleOf":4}`),
			[]string{"backward $.a bound-tightened"}},
		{"multipleOf lowered", p(`{"type":"integer","multipleOf":4}`), p(`{"type":"integer","multipleOf":2}`),
			[]string{"forward $.a bound-loosened"}},
		{"draft-04 exclusiveMinimum", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"number","minimum":0}}}`,
			`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"number","minimum":0,"exclusiveMinimum":true}}}`,
			[]string{"backward $.a bound-tightened"}},
	})
}

func TestJSONStringRules(t *testing.T) {
	p := func(s string) string { return obj(`"a":` + s) }
	runCases(t, []ruleCase{
		{"format added", p(`{"type":"string"}`), p(`{"type":"string","format":"uuid"}`),
			[]string{"backward $.a format-added"}},
		{"format removed", p(`{"type":"string","format":"uuid"}`), p(`{"type":"string"}`),
			[]string{"forward $.a format-removed"}},
		{"format changed", p(`{"type":"string","format":"uuid"}`), p(`{"type":"string","format":"email"}`),
			[]string{"backward $.a format-changed", "forward $.a format-changed"}},
		{"pattern added", p(`{"type":"string"}`), p(`{"type":"string","pattern":"^a"}`),
			[]string{"backward $.a pattern-added"}},
		{"unique items", p(`{"type":"array"}`), p(`{"type":"array","uniqueItems":true}`),
			[]string{"backward $.a unique-items-added"}},
	})
}

// A recursive schema is walked once per pair of places.
func TestJSONRecursive(t *testing.T) {
	tree := func(leaf string) string {
		return `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"` + leaf + `"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`
	}
	runCases(t, []ruleCase{
		{"same", tree("number"), tree("number"), nil},
		{"leaf narrowed", tree("number"), tree("integer"), []string{"backward $.kids[].v type-narrowed", "backward $.v type-narrowed"}},
	})
}

// Each line names the message, the path, the rule and the direction, and
// says what changed old before new.
func TestJSONLine(t *testing.T) {
	ps, err := CheckJSON("OrderPlaced", obj(`"amount":{"type":"number"}`), obj(`"amount":{"type":"integer"}`), ModeFull)
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %v", ps, err)
	}
	want := "OrderPlaced: $.amount: type-narrowed: breaks backward (new readers, old messages): type was number, is integer"
	if got := ps[0].String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestJSONModes(t *testing.T) {
	old, new := obj(`"a":{"type":"string"}`), obj(`"a":{"type":"integer"}`)
	for mode, want := range map[Mode]string{ModeFull: "backward,forward", ModeBackward: "backward", ModeForward: "forward", ModeNone: ""} {
		ps, err := CheckJSON("M", old, new, mode)
		if err != nil {
			t.Fatal(err)
		}
		var dirs []string
		for _, p := range ps {
			dirs = append(dirs, p.Direction.String())
		}
		if got := strings.Join(dirs, ","); got != want {
			t.Errorf("mode %s: directions %q, want %q", mode, got, want)
		}
	}
}

func TestJSONBadSchema(t *testing.T) {
	if _, err := CheckJSON("M", `{"type":`, obj(``), ModeFull); err == nil || !strings.Contains(err.Error(), "the previous schema: not JSON") {
		t.Errorf("got %v", err)
	}
	if _, err := CheckJSON("M", obj(``), `{"type":"nope"}`, ModeFull); err == nil || !strings.Contains(err.Error(), "the new schema: does not compile") {
		t.Errorf("got %v", err)
	}
}
