package runtime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxConsumeFunc is the longest a function of the consume path may be, in
// lines from its func keyword to its closing brace: process was 105 lines
// interleaving tracing, metrics and stats before it was cut by concept.
const maxConsumeFunc = 40

// TestConsumePathFunctionsAreSmall keeps the consume path cut by concept:
// no function in its files (internal/consume) over maxConsumeFunc lines,
// and no production file of runtime or internal/consume declaring one of
// the consumer's test hooks (they live in runtime's export_test.go,
// setting fields of consume.Config).
func TestConsumePathFunctionsAreSmall(t *testing.T) {
	fset := token.NewFileSet()
	consumePath, err := filepath.Glob(filepath.Join("internal", "consume", "*.go"))
	if err != nil || len(consumePath) == 0 {
		t.Fatalf("the consume path's files (internal/consume): %v", err)
	}
	for _, name := range consumePath {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxConsumeFunc {
				t.Errorf("%s: %s is %d lines, more than %d: cut it into the steps it takes", fset.Position(fd.Pos()), fd.Name.Name, n, maxConsumeFunc)
			}
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := filepath.Glob(filepath.Join("internal", "consume", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, engine...)
	hooks := []string{"withAckDelay", "withRegistryWaits", "withCopyGate", "withRungProbe"}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if slices.Contains(hooks, fd.Name.Name) || strings.HasSuffix(fd.Name.Name, "ForTest") {
				t.Errorf("%s: %s is a test hook in a production file: define it in export_test.go", fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
	}
}
