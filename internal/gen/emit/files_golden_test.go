package emit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// Files writes, for the model of every golden case that generates, exactly
// the files of its want/ (generator's TestGolden checks the same through
// Generate, -update rewrites them; this is the emitter's own check).
func TestFilesOfEveryGolden(t *testing.T) {
	manifests, err := filepath.Glob("../../../golden/*/acemq.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	cases := 0
	for _, m := range manifests {
		dir := filepath.Dir(m)
		if _, err := os.Stat(filepath.Join(dir, "want", "error.txt")); err == nil {
			continue
		}
		cases++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Chdir(dir)
			model, err := pipeline.Load("acemq.yaml")
			if err != nil {
				t.Fatal(err)
			}
			opts := pipeline.Options{Manifest: "acemq.yaml", OutDir: "want"}
			for _, o := range emit.Files(model, pipeline.Source(opts)) {
				var buf bytes.Buffer
				if err := o.File.Render(&buf); err != nil {
					t.Fatalf("%s: %v", o.Name, err)
				}
				got, err := emit.Format(buf.Bytes())
				if err != nil {
					t.Fatalf("%s: %v", o.Name, err)
				}
				want, err := os.ReadFile(filepath.Join("want", o.Name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from want/%s (go test ./generator -run TestGolden -update rewrites it)", o.Name, o.Name)
				}
			}
		})
	}
	if cases < 5 {
		t.Errorf("%d golden cases generate; the glob found too few", cases)
	}
}
