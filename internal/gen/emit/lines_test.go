package emit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acemq/acemq-go/internal/gen/emit"
)

// No line acemq-gen wrote in the repository, the goldens' want/ and every
// generated tree (examples, bench/orders, pgstore's inboxgen and
// prefixgen, runtime's avroevolve), is wider than emit.MaxLine columns
// (runes, a tab counting one): a reviewer reads generated code without
// scrolling.
func TestNoGeneratedLineIsLongerThanMaxLine(t *testing.T) {
	root := repoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !emit.HasHeader(src) {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(src), "\n") {
			if n := utf8.RuneCountInString(line); n > emit.MaxLine {
				t.Errorf("%s:%d is %d columns (at most %d): %.80s…", rel, i+1, n, emit.MaxLine, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("%d generated files found under %s; the walk missed some", files, root)
	}
}
