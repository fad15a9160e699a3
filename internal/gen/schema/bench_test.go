package schema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/names"
	"github.com/acemq/acemq-go/internal/gen/schema"
)

// BenchmarkCorpus maps and renders every corpus file that maps, as one
// Build per file (the types of a manifest of ~70 messages, ~500 types).
func BenchmarkCorpus(b *testing.B) {
	var inputs [][]schema.Input
	for _, pat := range []string{"avro/*.avsc", "jsonschema/*.json"} {
		files, _ := filepath.Glob(filepath.Join(corpusDir, pat))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			format := schema.Avro
			if strings.HasSuffix(f, ".json") {
				format = schema.JSONSchema
			}
			name := names.Default().Ident(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
			inputs = append(inputs, []schema.Input{{Message: name, GoName: name, Path: f, Dir: filepath.Dir(f), Data: data, Format: format}})
		}
	}
	b.ResetTimer()
	for b.Loop() {
		types := 0
		for _, in := range inputs {
			u, err := schema.Build(in, nil)
			if err != nil {
				continue
			}
			if _, err := render("p", u); err != nil {
				b.Fatal(err)
			}
			types += len(u.Types)
		}
		b.ReportMetric(float64(types), "types/op")
	}
}
