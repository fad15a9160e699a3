package schema

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/gen/names"
)

// BenchmarkMetaschemaShare measures, over the corpus's JSON Schema files,
// Build (which checks each document against its metaschema) and the
// metaschema check alone, one after the other in each iteration: the
// check's share of Build is meta/op over build/op.
func BenchmarkMetaschemaShare(b *testing.B) {
	files, _ := filepath.Glob("testdata/corpus/jsonschema/*.json")
	var inputs []Input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		name := names.Default().Ident(filepath.Base(f))
		inputs = append(inputs, Input{Message: name, GoName: name, Path: f, Dir: filepath.Dir(f), Data: data, Format: JSONSchema})
	}
	var build, meta time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, in := range inputs {
			_, _ = Build([]Input{in}, nil)
		}
		t1 := time.Now()
		for _, in := range inputs {
			_ = metaschemaProblems(in.Data)
		}
		t2 := time.Now()
		build += t1.Sub(t0)
		meta += t2.Sub(t1)
	}
	b.ReportMetric(float64(build)/float64(b.N), "build-ns/op")
	b.ReportMetric(float64(meta)/float64(b.N), "meta-ns/op")
	b.ReportMetric(float64(meta)/float64(build), "meta/build")
}
