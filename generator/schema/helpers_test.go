package schema_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/generator/emit"
	"github.com/acemq/acemq-go/generator/schema"
	"github.com/dave/jennifer/jen"
)

// render emits the types of u as the Go file of package pkg.
func render(pkg string, u *schema.Universe) (string, error) {
	f := jen.NewFile(pkg)
	emit.Types(f, u)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// gen builds one message from a schema text and renders it.
func gen(t *testing.T, format schema.Format, goName, text string) (string, error) {
	t.Helper()
	path := "m.avsc"
	if format == schema.JSONSchema {
		path = "m.json"
	}
	u, err := schema.Build([]schema.Input{{Message: goName, GoName: goName, Path: path, Dir: t.TempDir(), Data: []byte(text), Format: format}}, nil)
	if err != nil {
		return "", err
	}
	return render("p", u)
}

// checkSource parses src and fails on any comment a Go tool could read as
// a directive (//go:..., //line) and on any /* */ comment: schema text
// must stay inside // doc comments.
func checkSource(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "types.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("generated code does not parse: %v\n%s", err, src)
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*") {
				t.Errorf("generated code has the comment %q:\n%s", c.Text, src)
			}
		}
	}
	return f
}

// checkNoAny fails if a declared type or field of f is (or holds) any or
// an interface: a schema maps to a real type, json.RawMessage, or an error.
func checkNoAny(t *testing.T, name string, f *ast.File) {
	t.Helper()
	check := func(where string, expr ast.Expr) {
		ast.Inspect(expr, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.InterfaceType:
				t.Errorf("%s: %s is an interface", name, where)
			case *ast.Ident:
				if n.Name == "any" {
					t.Errorf("%s: %s holds any", name, where)
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, spec := range g.Specs {
			ts := spec.(*ast.TypeSpec)
			check("type "+ts.Name.Name, ts.Type)
		}
	}
}

// repoRoot is the module root (two levels up from this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// writeModule writes files (relative path → content) into a fresh module
// that requires this one (replaced by the working tree) and its dependency
// versions (its go.sum is copied), and returns its directory.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	root := repoRoot(t)
	files["go.mod"] = "module acemqgentest\n\ngo 1.26.0\n\nrequire (\n" +
		"\tgithub.com/acemq/acemq-go v0.0.0\n" +
		"\tgithub.com/hamba/avro/v2 " + modVersion(t, root, "github.com/hamba/avro/v2") + "\n" +
		"\tgithub.com/santhosh-tekuri/jsonschema/v6 " + modVersion(t, root, "github.com/santhosh-tekuri/jsonschema/v6") + "\n)\n\n" +
		"replace github.com/acemq/acemq-go => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files["go.sum"] = string(sum)
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// modVersion reads the version of module path this module requires.
func modVersion(t *testing.T, root, path string) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
		if len(f) >= 3 && f[0] == "require" && f[1] == path {
			return f[2]
		}
	}
	t.Fatalf("go.mod does not require %s", path)
	return ""
}

// goCmd runs the go command in dir and returns its combined output.
func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(goroot(), "bin", "go"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "/usr/local/go"
	}
	return strings.TrimSpace(string(out))
}
