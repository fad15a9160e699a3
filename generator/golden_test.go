package generator

import (
	"bytes"
	"errors"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/rogpeppe/go-internal/diff"
)

var update = flag.Bool("update", false, "rewrite the golden files under golden/ (review with git diff golden/)")

// TestGolden generates every case of ../golden and compares the result with
// its want/: the generated files of a case that succeeds (want/ is a real
// package of the module, built and tested with the rest), or want/error.txt
// for a case that must fail. -update rewrites them.
func TestGolden(t *testing.T) {
	manifests, err := filepath.Glob("../golden/*/acemq.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, m := range manifests {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Chdir(dir) // so that errors name acemq.yaml, as a user sees them
			files, err := Generate(Options{Manifest: "acemq.yaml", OutDir: "want"})
			if err != nil {
				goldenError(t, err)
				return
			}
			goldenFiles(t, files)
		})
	}
}

const errorFile = "want/error.txt"

func goldenError(t *testing.T, err error) {
	var es manifest.Errors
	if !errors.As(err, &es) {
		t.Errorf("error %T is not a manifest.Errors: %v", err, err)
	}
	got := err.Error() + "\n"
	if *update {
		writeGolden(t, errorFile, []byte(got))
		return
	}
	want, rerr := os.ReadFile(errorFile)
	if rerr != nil {
		t.Fatalf("generation failed, and the case has no %s:\n%v", errorFile, err)
	}
	if got != string(want) {
		t.Errorf("error text differs from %s (go test ./generator -run TestGolden -update rewrites it):\n%s",
			errorFile, diff.Diff(errorFile, want, "got", []byte(got)))
	}
}

func goldenFiles(t *testing.T, files []File) {
	if _, err := os.Stat(errorFile); err == nil && !*update {
		t.Fatalf("generation succeeded, but the case expects the failure in %s", errorFile)
	}
	again, err := Generate(Options{Manifest: "acemq.yaml", OutDir: "want"})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	produced := map[string]bool{}
	for i, f := range files {
		produced[f.Path] = true
		if !bytes.Equal(f.Content, again[i].Content) {
			t.Errorf("%s: two runs gave different bytes", f.Path)
		}
		checkGenerated(t, f)
		path := filepath.Join("want", f.Path)
		if *update {
			writeGolden(t, path, f.Content)
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (go test ./generator -run TestGolden -update writes it)", path, err)
			continue
		}
		if !bytes.Equal(want, f.Content) {
			t.Errorf("%s is stale (go test ./generator -run TestGolden -update rewrites it):\n%s",
				path, diff.Diff(path, want, "generated", f.Content))
		}
	}
	if *update {
		os.Remove(errorFile)
	}
	for _, name := range leftovers(t, produced) {
		if *update {
			os.Remove(filepath.Join("want", name))
			continue
		}
		t.Errorf("want/%s is a generated file acemq-gen no longer writes; delete it", name)
	}
}

// checkGenerated parses f: it must be Go that go/ast recognises as generated.
func checkGenerated(t *testing.T, f File) {
	parsed, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Content, parser.ParseComments)
	if err != nil {
		t.Errorf("%s does not parse: %v", f.Path, err)
		return
	}
	if !ast.IsGenerated(parsed) {
		t.Errorf("%s: go/ast.IsGenerated is false", f.Path)
	}
	for _, cg := range parsed.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") {
				t.Errorf("%s: a comment became a directive: %s", f.Path, c.Text)
			}
		}
	}
}

// leftovers are the files of want/ that acemq-gen wrote (emit.Ours) and
// this run did not produce, as the command removes them.
func leftovers(t *testing.T, produced map[string]bool) []string {
	entries, err := os.ReadDir("want")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if produced[name] || !strings.HasSuffix(name, ".go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join("want", name))
		if err == nil && emit.Ours(name, data) {
			out = append(out, name)
		}
	}
	return out
}

func writeGolden(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}
