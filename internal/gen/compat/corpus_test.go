package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every schema of the corpus (internal/gen/schema/testdata/corpus) is
// compatible with itself, both ways, and is walked quickly: the checker
// meets real $refs, recursion, anyOf/oneOf and allOf there.
func TestCorpusSelfCompatible(t *testing.T) {
	files, err := filepath.Glob("../schema/testdata/corpus/*/*")
	if err != nil || len(files) < 70 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		start := time.Now()
		var ps []Problem
		switch {
		case strings.HasSuffix(f, ".avsc"):
			ps, err = CheckAvro(name, string(data), string(data), ModeFull)
		case strings.HasSuffix(f, ".json"):
			ps, err = CheckJSON(name, string(data), string(data), ModeFull)
		default:
			continue
		}
		if err != nil {
			// A file that refers to another file does not compile alone;
			// the generator refuses those too (docs/corpus.md).
			t.Logf("%s: %v", name, err)
			continue
		}
		for _, p := range ps {
			t.Errorf("%s against itself: %s", name, p)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v to compare with itself", name, d)
		}
	}
}
