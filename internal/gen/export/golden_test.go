package export

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden exports under golden/*/exports (review with git diff golden/)")

// goldenNames are the files of each format under golden/<case>/exports/.
var goldenNames = map[string]string{
	"definitions": "definitions.json",
	"asyncapi":    "asyncapi.json",
	"mermaid":     "topology.mmd",
	"dot":         "topology.dot",
	"markdown":    "topology.md",
}

// goldenCase is a golden case whose manifest builds.
type goldenCase struct {
	name, dir string
	model     *model.Model
}

// goldenCases are the cases of ../../golden that generate (those with a
// want/error.txt are the generator's error cases, with nothing to export).
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	manifests, err := filepath.Glob("../../../golden/*/acemq.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	var out []goldenCase
	for _, path := range manifests {
		dir := filepath.Dir(path)
		if _, err := os.Stat(filepath.Join(dir, "want", "error.txt")); err == nil {
			continue
		}
		out = append(out, goldenCase{filepath.Base(dir), dir, buildManifest(t, path)})
	}
	return out
}

func buildManifest(t *testing.T, path string) *model.Model {
	t.Helper()
	name, err := input.Name(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := input.Load(input.OS(), name, "acemq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.ParseErr != nil {
		t.Fatalf("%s: %v", path, s.ParseErr)
	}
	m, err := model.Build(s.Manifest, s.FS, s.Dir, s.Imports...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// TestGoldenExports renders every format of every golden case and
// compares it with golden/<case>/exports/; -update rewrites them. Two
// renderings of a model must give the same bytes.
func TestGoldenExports(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, format := range Formats {
				got, err := Render(c.model, format, Options{Source: "acemq.yaml"})
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				again, _ := Render(c.model, format, Options{Source: "acemq.yaml"})
				if !bytes.Equal(got, again) {
					t.Errorf("%s: two renderings differ", format)
				}
				path := filepath.Join(c.dir, "exports", goldenNames[format])
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s is missing (make golden writes it)", path)
					continue
				}
				if !bytes.Equal(want, got) {
					t.Errorf("%s is stale (make golden rewrites it):\n%s", path, diff.Diff(path, want, "rendered", got))
				}
			}
		})
	}
}
