package doccheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// snippet is one fenced ```go block.
type snippet struct {
	file    string // relative to the module root
	line    int    // the line of the block's first line of code
	code    string
	context string // a package directory to compile inside, or ""
}

var marker = regexp.MustCompile(`^<!--\s*snippet:\s*in\s+(\S+)\s*-->$`)

// extract returns the ```go blocks of a Markdown file.
func extract(root, rel string) ([]snippet, error) {
	f, err := os.Open(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out     []snippet
		cur     *snippet
		prev    string
		n       int
		b       strings.Builder
		scanner = bufio.NewScanner(f)
	)
	for scanner.Scan() {
		n++
		line := scanner.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```go":
			cur = &snippet{file: rel, line: n + 1}
			if m := marker.FindStringSubmatch(prev); m != nil {
				cur.context = m[1]
			}
			b.Reset()
		case cur != nil && trimmed == "```":
			cur.code = b.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			b.WriteString(line + "\n")
		}
		if trimmed != "" {
			prev = trimmed
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a ```go block that is never closed", rel, cur.line-1)
	}
	return out, scanner.Err()
}

// knownImports are the packages a snippet may use without importing them.
var knownImports = map[string]string{
	"context":   "context",
	"errors":    "errors",
	"fmt":       "fmt",
	"log":       "log",
	"slog":      "log/slog",
	"os":        "os",
	"signal":    "os/signal",
	"syscall":   "syscall",
	"time":      "time",
	"strings":   "strings",
	"sync":      "sync",
	"testing":   "testing",
	"http":      "net/http",
	"runtime":   "github.com/acemq/acemq-go/runtime",
	"acemqtest": "github.com/acemq/acemq-go/runtime/acemqtest",
	"wire":      "github.com/acemq/acemq-go/runtime/wire",
	"amqp":      "github.com/rabbitmq/amqp091-go",
	"pgstore":   "github.com/acemq/acemq-go/pgstore",
	"pgx":       "github.com/jackc/pgx/v5",
	"pgxpool":   "github.com/jackc/pgx/v5/pgxpool",
}

// render is the Go file for s in package pkg.
func render(s snippet, pkg string) string {
	line := fmt.Sprintf("//line %s:%d\n", s.file, s.line)
	if wholeFile(s) {
		return line + s.code
	}
	var imports []string
	if f, _ := parser.ParseFile(token.NewFileSet(), "", "package p\n"+s.code, parser.AllErrors); f != nil {
		used := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
					used[id.Name] = true
				}
			}
			return true
		})
		for name := range used {
			if path, ok := knownImports[name]; ok {
				imports = append(imports, fmt.Sprintf("\t%s %q\n", name, path))
			}
		}
		slices.Sort(imports)
	}
	return "package " + pkg + "\n\nimport (\n" + strings.Join(imports, "") + ")\n\n" + line + s.code
}

// wholeFile reports a block with its own package clause.
func wholeFile(s snippet) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", s.code, parser.PackageClauseOnly)
	return err == nil
}

// build compiles every snippet; the error is the compiler's output. A
// whole file is a package of its own; the declaration blocks of one
// Markdown file with the same context are one package, a file per block,
// so a later block can use what an earlier one declared.
func build(t *testing.T, root string, snippets []snippet) error {
	t.Helper()
	base := filepath.Join(root, "internal", "doccheck", "testdata", "build")
	if err := os.RemoveAll(base); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	args := []string{"build"}
	dirs := map[string]string{} // file + context → directory
	pkgs := map[string]string{} // directory → package name
	for i, s := range snippets {
		key := s.file + "\x00" + s.context
		if wholeFile(s) {
			key = fmt.Sprintf("whole %d", i)
		}
		dir, ok := dirs[key]
		if !ok {
			dir = filepath.Join(base, fmt.Sprintf("s%03d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			pkg := "snippet"
			if s.context != "" {
				var err error
				if pkg, err = copyPackage(filepath.Join(root, s.context), dir); err != nil {
					t.Fatalf("%s:%d: snippet context %s: %v", s.file, s.line-1, s.context, err)
				}
			}
			dirs[key], pkgs[dir] = dir, pkg
			rel, _ := filepath.Rel(root, dir)
			args = append(args, "./"+filepath.ToSlash(rel))
		}
		name := fmt.Sprintf("snippet%03d.go", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(render(s, pkgs[dir])), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// copyPackage copies the non-test Go files of src into dst and returns
// their package name.
func copyPackage(src, dst string) (string, error) {
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return "", err
	}
	pkg := ""
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if pkg == "" {
			pf, err := parser.ParseFile(token.NewFileSet(), f, b, parser.PackageClauseOnly)
			if err != nil {
				return "", err
			}
			pkg = pf.Name.Name
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			return "", err
		}
	}
	if pkg == "" {
		return "", fmt.Errorf("no Go files in %s", src)
	}
	return pkg, nil
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// Every ```go block of README.md, docs/*.md and examples/*/README.md
// compiles.
func TestMarkdownSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the snippets with the go command, the quick test's slowest package on a fresh clone (make test runs it)")
	}
	root := moduleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, d := range append(docs, examples...) {
		rel, _ := filepath.Rel(root, d)
		files = append(files, filepath.ToSlash(rel))
	}
	var all []snippet
	for _, f := range files {
		s, err := extract(root, f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s...)
	}
	if len(all) < 4 {
		t.Fatalf("found %d Go snippets in %v; the extraction is broken", len(all), files)
	}
	if err := build(t, root, all); err != nil {
		t.Errorf("a Go snippet in the docs does not compile:\n%v", err)
	}
	t.Logf("%d snippets compiled from %d files", len(all), len(files))
}

// The check fails on a snippet that does not compile, and names its
// Markdown line.
func TestBrokenSnippetIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a snippet with the go command (make test runs it)")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	md := "# x\n\n<!-- snippet: in golden/orders/want -->\n```go\nfunc f(m *runtime.Message[OrderPlaced]) bool {\n\treturn m.Payload.CustomerID == \"\"\n}\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := extract(dir, "broken.md")
	if err != nil || len(s) != 1 || s[0].context != "golden/orders/want" || s[0].line != 5 {
		t.Fatalf("extract = %+v, %v", s, err)
	}
	err = build(t, root, s)
	if err == nil || !strings.Contains(err.Error(), "broken.md:"+strconv.Itoa(6)) || !strings.Contains(err.Error(), "mismatched types") {
		t.Errorf("build of a snippet comparing a *string with \"\" = %v; want a compiler error at broken.md:6", err)
	}
}
