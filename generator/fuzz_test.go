package generator

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

// FuzzGenerate: whatever the manifest, Generate returns files or a
// manifest.Errors (or a read error), and never panics, including on trees
// that break the schema and are still resolved for errors of meaning.
func FuzzGenerate(f *testing.F) {
	for _, m := range []string{"orders", "shipping", "names", "err-many", "err-name-clash"} {
		if data, err := os.ReadFile(filepath.Join("..", "golden", m, "acemq.yaml")); err == nil {
			f.Add(string(data))
		}
	}
	f.Add("version: 1\npackage: p\npolicies: {p: {exponential: {attempts: x, max: []}}}\nqueues: {q: {bindings: 3, consumes: {a: 1}}}\n")
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"type": "object", "properties": {"id": {"type": "string"}}}`), 0o644)
		path := filepath.Join(dir, "acemq.yaml")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Generate(Options{Manifest: path})
		var es manifest.Errors
		if err != nil && !errors.As(err, &es) {
			t.Fatalf("error %T is not manifest.Errors: %v", err, err)
		}
	})
}
