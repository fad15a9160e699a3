package generator_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/generator"
	"github.com/acemq/acemq-go/internal/gen/pipeline"
)

// The library's errors carry no "acemq-gen:" prefix: that is the
// command's to add.
func TestErrorsHaveNoCommandPrefix(t *testing.T) {
	_, err := generator.Generate(generator.Options{Manifest: "testdata/does-not-exist.yaml"})
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "acemq-gen") {
		t.Errorf("Generate of a missing manifest = %v; want fs.ErrNotExist without the acemq-gen: prefix", err)
	}
	res, err := pipeline.Run(pipeline.Options{Manifest: "../golden/orders/acemq.yaml", OutDir: "../golden/orders/want"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Messages != 2 || res.Queues != 1 || res.Publishers != 1 || len(res.Files) < 6 {
		t.Errorf("Run = %d messages, %d queues, %d publishers, %d files; want 2, 1, 1, at least 6", res.Messages, res.Queues, res.Publishers, len(res.Files))
	}
}

// No string literal of the library's code (generator and internal/gen, tests aside)
// starts with "acemq-gen:", so that no error of it, however rare (an
// emitter bug), reaches the command with the prefix the command adds.
func TestNoLiteralHasTheCommandPrefix(t *testing.T) {
	checked := 0
	walk := func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
			if err == nil {
				err = filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(s, "acemq-gen:") {
				t.Errorf("%s: %q starts with the command's prefix; the library leaves it to cmd/acemq-gen", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	}
	for _, dir := range []string{".", "../internal/gen"} {
		if err := filepath.WalkDir(dir, walk); err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Errorf("checked %d files; the walk found too few", checked)
	}
}
