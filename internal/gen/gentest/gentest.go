package gentest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/emit"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/dave/jennifer/jen"
)

// Render emits the types of u as the Go file of package pkg.
func Render(pkg string, u *schema.Universe) (string, error) {
	f := jen.NewFile(pkg)
	emit.Types(f, u)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Gen builds one message from a schema text and renders it.
func Gen(t *testing.T, format schema.Format, goName, text string) (string, error) {
	t.Helper()
	path := "m.avsc"
	if format == schema.JSONSchema {
		path = "m.json"
	}
	u, err := schema.Build([]schema.Input{{Message: goName, GoName: goName, Path: path, Dir: t.TempDir(), Data: []byte(text), Format: format}}, nil)
	if err != nil {
		return "", err
	}
	return Render("p", u)
}

// CheckSource parses src and fails on any comment a Go tool could read as
// a directive (//go:..., //line) and on any /* */ comment: schema text
// must stay inside // doc comments.
func CheckSource(t *testing.T, src string) *ast.File {
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

// CheckNoAny fails if a declared type or field of f is (or holds) any or
// an interface: a schema maps to a real type, json.RawMessage, or an error.
func CheckNoAny(t *testing.T, name string, f *ast.File) {
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

// RepoRoot is the module root: the nearest directory above the test's
// working directory whose go.mod is this module's.
func RepoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module github.com/acemq/acemq-go\n") {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod of github.com/acemq/acemq-go above the working directory")
		}
		dir = up
	}
}

// WriteModule writes files (relative path → content) into a fresh module
// that requires this one and the runtime module (both replaced by the
// working tree) and their dependency versions (their go.sum files are
// copied), and returns its directory.
func WriteModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	root := RepoRoot(t)
	files["go.mod"] = "module acemqgentest\n\ngo 1.26.0\n\nrequire (\n" +
		"\tgithub.com/acemq/acemq-go v0.0.0\n" +
		"\tgithub.com/acemq/acemq-go/runtime v0.0.0\n" +
		"\tgithub.com/hamba/avro/v2 " + modVersion(t, root, "github.com/hamba/avro/v2") + "\n" +
		"\tgithub.com/santhosh-tekuri/jsonschema/v6 " + modVersion(t, root, "github.com/santhosh-tekuri/jsonschema/v6") + "\n)\n\n" +
		Replaces(root)
	files["go.sum"] = Sums(t, root)
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

// Replaces is the replace block of a scratch module that uses this
// repository's generator module and runtime module from the working tree
// at root.
func Replaces(root string) string {
	return "replace (\n\tgithub.com/acemq/acemq-go => " + root + "\n" +
		"\tgithub.com/acemq/acemq-go/runtime => " + filepath.Join(root, "runtime") + "\n)\n"
}

// Sums is the go.sum of a scratch module that uses the generator module and
// the runtime module: the two modules' go.sum files together.
func Sums(t *testing.T, root string) string {
	t.Helper()
	var all []byte
	for _, f := range []string{"go.sum", filepath.Join("runtime", "go.sum")} {
		sum, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sum...)
	}
	return string(all)
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

// GoCmd runs the go command in dir and returns its combined output.
func GoCmd(dir string, args ...string) (string, error) {
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

var spaces = regexp.MustCompile(`[ \t]+`)

// AssertHas fails unless src holds every want, comparing with runs of
// blanks collapsed (gofmt aligns fields).
func AssertHas(t *testing.T, src string, want ...string) {
	t.Helper()
	norm := spaces.ReplaceAllString(src, " ")
	for _, w := range want {
		if !strings.Contains(norm, spaces.ReplaceAllString(w, " ")) {
			t.Errorf("generated code lacks %q:\n%s", w, src)
		}
	}
}
