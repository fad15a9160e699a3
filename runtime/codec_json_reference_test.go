package runtime_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// schemaReaders are the runtime's production files allowed to read a
// compiled *jsonschema.Schema's fields, with the fields each reads: only
// jsoncheck takes the library's own format functions from a compiled
// {"format": name} (TestValidatorVersionIsPinned in internal/jsoncheck
// says what to re-check when the library moves).
var schemaReaders = map[string][]string{
	"internal/jsoncheck/check.go": {"Format"},
}

// TestJSONValidationIsTheLibrarys: the JSON path without generated code
// validates with santhosh-tekuri/jsonschema and nothing of ours. No
// production package of the runtime module walks the compiled schema's
// keywords (Properties, Required, Items, Types, Enum, ...) to judge a
// document itself, the way the precheck and the prescan did, mirroring the
// library's walk "as of v6.0.x": type-checked, no package reads a field of
// a jsonschema.Schema, but for schemaReaders'.
func TestJSONValidationIsTheLibrarys(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: type-checks the module's packages with go list -export")
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(goList(t, "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./...")), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		exports[path] = file
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(goList(t, "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .Imports \" \"}}", "./...")), "\n") {
		parts := strings.Split(line, "\t")
		if len(parts) < 4 || !strings.Contains(parts[3], "github.com/santhosh-tekuri/jsonschema/") {
			continue
		}
		importers++
		var files []*ast.File
		for _, name := range strings.Fields(parts[2]) {
			f, err := parser.ParseFile(fset, filepath.Join(parts[1], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		if _, err := (&types.Config{Importer: imp}).Check(parts[0], fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", parts[0], err)
		}
		read := map[string][]string{} // file -> fields
		for sel, s := range info.Selections {
			if s.Kind() != types.FieldVal || !isSchema(s.Recv()) {
				continue
			}
			file, _ := filepath.Rel(dir, fset.Position(sel.Pos()).Filename)
			file = filepath.ToSlash(file)
			if !slices.Contains(schemaReaders[file], sel.Sel.Name) && !slices.Contains(read[file], sel.Sel.Name) {
				read[file] = append(read[file], sel.Sel.Name)
			}
		}
		for file, fields := range read {
			slices.Sort(fields)
			t.Errorf("%s reads a compiled schema's %s: a second validator beside santhosh-tekuri/jsonschema's "+
				"(the reference path is the library's alone; speed comes from generated code)", file, strings.Join(fields, ", "))
		}
	}
	if importers < 2 {
		t.Fatalf("%d packages import the validator: want runtime's codec and jsoncheck at least", importers)
	}
}

// isSchema reports whether t is jsonschema.Schema or a pointer to it.
func isSchema(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Name() == "Schema" &&
		strings.HasPrefix(n.Obj().Pkg().Path(), "github.com/santhosh-tekuri/jsonschema/")
}

// goList runs go list in the runtime module with args.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
