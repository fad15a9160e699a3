package compat

import (
	"fmt"
	"slices"
	"testing"
)

func gotAvro(t *testing.T, old, new string) []string {
	t.Helper()
	ps, err := CheckAvro("M", old, new, ModeFull)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %s %s", p.Direction, p.Path, p.Rule))
	}
	return out
}

func rec(fields string) string {
	return `{"type":"record","name":"R","namespace":"n","fields":[` + fields + `]}`
}

func TestAvroRules(t *testing.T) {
	for _, c := range []ruleCase{
		{"same", rec(`{"name":"a","type":"string"}`), rec(`{"name":"a","type":"string"}`), nil},
		{"field added with default", rec(``), rec(`{"name":"a","type":"string","default":""}`), nil},
		{"field added without default", rec(``), rec(`{"name":"a","type":"string"}`),
			[]string{"backward $.a field-added-without-default"}},
		{"field removed without default", rec(`{"name":"a","type":"string"}`), rec(``),
			[]string{"forward $.a field-removed-without-default"}},
		{"promoted", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"long"}`),
			[]string{"forward $.a type-changed"}},
		{"changed", rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"string"}`),
			[]string{"backward $.a type-changed", "forward $.a type-changed"}},
		{"nullable dropped", rec(`{"name":"a","type":["null","string"]}`), rec(`{"name":"a","type":"string"}`),
			[]string{"backward $.a union-branch-removed"}},
		{"nullable added", rec(`{"name":"a","type":"string"}`), rec(`{"name":"a","type":["null","string"]}`),
			[]string{"forward $.a union-branch-added"}},
		{"symbol added", rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A"]}}`), rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A","B"]}}`),
			[]string{"forward $.s enum-symbol-added"}},
		{"symbol removed", rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A","B"]}}`), rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A"]}}`),
			[]string{"backward $.s enum-symbol-removed"}},
		{"symbol added, old reader has a default", rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A"],"default":"A"}}`), rec(`{"name":"s","type":{"type":"enum","name":"S","symbols":["A","B"],"default":"A"}}`), nil},
		{"fixed size", rec(`{"name":"f","type":{"type":"fixed","name":"F","size":4}}`), rec(`{"name":"f","type":{"type":"fixed","name":"F","size":8}}`),
			[]string{"backward $.f fixed-size-changed", "forward $.f fixed-size-changed"}},
		{"renamed", `{"type":"record","name":"A","fields":[]}`, `{"type":"record","name":"B","fields":[]}`,
			[]string{"backward $ name-changed", "forward $ name-changed"}},
		{"renamed with an alias", `{"type":"record","name":"A","fields":[]}`, `{"type":"record","name":"B","aliases":["A"],"fields":[]}`,
			[]string{"forward $ name-changed"}},
		{"deep", rec(`{"name":"lines","type":{"type":"array","items":{"type":"record","name":"L","fields":[{"name":"q","type":"int"}]}}}`),
			rec(`{"name":"lines","type":{"type":"array","items":{"type":"record","name":"L","fields":[{"name":"q","type":"string"}]}}}`),
			[]string{"backward $.lines[].q type-changed", "forward $.lines[].q type-changed"}},
		{"timestamp unit", rec(`{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}`), rec(`{"name":"at","type":{"type":"long","logicalType":"timestamp-micros"}}`),
			[]string{"backward $.at logical-type-changed", "forward $.at logical-type-changed"}},
		{"decimal scale in a nullable union", rec(`{"name":"p","type":["null",{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}]}`),
			rec(`{"name":"p","type":["null",{"type":"bytes","logicalType":"decimal","precision":9,"scale":3}]}`),
			[]string{"backward $.p logical-type-changed", "forward $.p logical-type-changed"}},
		{"logical type added", rec(`{"name":"d","type":"int"}`), rec(`{"name":"d","type":{"type":"int","logicalType":"date"}}`),
			[]string{"backward $.d logical-type-changed", "forward $.d logical-type-changed"}},
		{"map values", rec(`{"name":"m","type":{"type":"map","values":"long"}}`), rec(`{"name":"m","type":{"type":"map","values":"int"}}`),
			[]string{"backward $.m.* type-changed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if g := gotAvro(t, c.old, c.new); !slices.Equal(g, c.want) {
				t.Errorf("old %s\nnew %s\ngot  %q\nwant %q", c.old, c.new, g, c.want)
			}
		})
	}
}

// Same-named records of the two versions do not collide in a cache.
func TestAvroSeparateCaches(t *testing.T) {
	old := rec(`{"name":"a","type":"string"}`)
	if _, err := CheckAvro("M", old, rec(`{"name":"b","type":"int"}`), ModeFull); err != nil {
		t.Fatal(err)
	}
	if g := gotAvro(t, old, old); g != nil {
		t.Errorf("got %q", g)
	}
}

func TestAvroLine(t *testing.T) {
	ps, err := CheckAvro("OrderPlaced", rec(``), rec(`{"name":"a","type":"string"}`), ModeBackward)
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %v", ps, err)
	}
	want := "OrderPlaced: $.a: field-added-without-default: breaks backward (new readers, old messages): old messages lack it; give it a default"
	if got := ps[0].String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
