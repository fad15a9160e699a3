package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/schema"
)

// FuzzBuild feeds Build arbitrary schema text in both formats: it must
// return (types or *Errors), never panic or hang, and what it returns must
// render. Seeds are the corpus files.
func FuzzBuild(f *testing.F) {
	for _, pat := range []string{"avro/*.avsc", "jsonschema/*.json"} {
		files, _ := filepath.Glob(filepath.Join(corpusDir, pat))
		for _, file := range files[:min(len(files), 6)] {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, filepath.Ext(file) == ".json")
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		format, path := schema.Avro, "f.avsc"
		if isJSON {
			format, path = schema.JSONSchema, "f.json"
		}
		u, err := schema.Build([]schema.Input{{Message: "M", GoName: "M", Path: path, Dir: t.TempDir(), Data: data, Format: format}}, nil)
		if err != nil {
			errorsOf(t, err)
			return
		}
		src, err := render("p", u)
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		checkSource(t, src)
	})
}
