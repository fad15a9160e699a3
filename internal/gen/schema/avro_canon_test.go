package schema

import (
	"fmt"
	"strings"
	"testing"
)

// nestedRecords is an Avro schema of depth records, each holding the next.
func nestedRecords(depth int) string {
	s := fmt.Sprintf(`{"type":"record","name":"R%d","fields":[]}`, depth)
	for i := depth - 1; i >= 0; i-- {
		s = fmt.Sprintf(`{"type":"record","name":"R%d","fields":[{"name":"f","type":%s}]}`, i, s)
	}
	return s
}

// The canonical form of a named Avro type is rendered only when another
// input has a type of the same full name and Go name: rendering it for
// each of them re-rendered every nested subtree, quadratic in the depth
// (3000 nested records took minutes). Two inputs share their types only
// when type_go_names names them (by default each nested type's name
// starts with its message's), so the entries here name R0...R50.
func TestAvroCanonicalFormIsLazy(t *testing.T) {
	b := newBuilder(nil)
	for i := range 51 {
		b.typeNames[fmt.Sprintf("R%d", i)] = fmt.Sprintf("R%d", i)
	}
	b.reserve("A")
	b.load(Input{Message: "A", GoName: "A", Path: "a.avsc", Data: []byte(`{"type":"record","name":"V","fields":[{"name":"r","type":` + nestedRecords(50) + `}]}`), Format: Avro})
	if len(b.errs) > 0 {
		t.Fatal(b.errs)
	}
	if len(b.avroNamed) != 52 {
		t.Fatalf("%d named types remembered, want 52", len(b.avroNamed))
	}
	for name, n := range b.avroNamed {
		if n.canon != "" {
			t.Errorf("%s: canonical form rendered though no other input has that name", name)
		}
	}

	// A second input with the same types shares them: only the outermost is
	// compared, so only its canonical form is rendered.
	b.reserve("B")
	b.load(Input{Message: "B", GoName: "B", Path: "b.avsc", Data: []byte(`{"type":"record","name":"W","fields":[{"name":"r","type":` + nestedRecords(50) + `}]}`), Format: Avro})
	if len(b.errs) > 0 {
		t.Fatal(b.errs)
	}
	rendered := 0
	for _, n := range b.avroNamed {
		if n.canon != "" {
			rendered++
		}
	}
	if rendered != 1 || !strings.HasPrefix(b.avroNamed["R0 R0"].canon, `{"name":"R0"`) {
		t.Errorf("%d canonical forms rendered, want only R0's: %q", rendered, b.avroNamed["R0 R0"].canon)
	}
	if got := len(b.u.Types); got != 53 {
		t.Errorf("%d types, want 53 (the second input shares R0...R50)", got)
	}
}

// BenchmarkAvroDepth maps nested records at two depths: with a linear
// mapping, ns/record stays about the same from depth 300 to 3000.
func BenchmarkAvroDepth(b *testing.B) {
	for _, depth := range []int{300, 3000} {
		data := []byte(nestedRecords(depth))
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			for b.Loop() {
				if _, err := Build([]Input{{Message: "A", GoName: "A", Path: "a.avsc", Data: data, Format: Avro}}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/record")
		})
	}
}
