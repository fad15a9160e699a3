package manifest

import (
	"errors"
	"testing"
)

// FuzzParse: any input gives a tree or Errors, never a panic, and every
// error has the file name.
func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("version: 1\npackage: p\nqueues: {q: {consumes: [A, A]}}\n")
	f.Add("a: &x {b: *x}\n")
	f.Add("- 1\n- 2\n")
	f.Add("version: 1\npackage: p\n<<: {x: 1}\n")
	f.Fuzz(func(t *testing.T, data string) {
		file, err := Parse("acemq.yaml", []byte(data))
		if err == nil {
			if file == nil {
				t.Fatal("nil file and nil error")
			}
			return
		}
		var es Errors
		if !errors.As(err, &es) || len(es) == 0 {
			t.Fatalf("error %T %v is not a non-empty Errors", err, err)
		}
		for _, e := range es {
			if e.File != "acemq.yaml" {
				t.Fatalf("error without the file: %v", e)
			}
		}
	})
}
