package jsoncheck

import "testing"

// formatReference is the reference library's verdict for a format.
func formatReference(t testing.TB, name string) func(string) bool {
	formatsOnce.Do(loadFormats)
	ref := formats[name]
	if ref == nil {
		t.Fatalf("the reference has no %s format", name)
	}
	return func(s string) bool { return ref.Validate(s) == nil }
}

// fastIsReference checks that Format(name) gives the reference's verdict
// on every case, that fast decides only as the reference does, and that
// it decides most of them (what of the cases is counted).
func fastIsReference(t *testing.T, name string, fast func(string) (ok, sure bool), cases []string, what string) {
	t.Helper()
	ref := formatReference(t, name)
	f := Format(name)
	sure := 0
	for _, s := range cases {
		want := ref(s)
		if got := f(s); got != want {
			t.Errorf("%s %q: Format %v, reference %v", name, s, got, want)
		}
		if ok, isSure := fast(s); isSure {
			sure++
			if ok != want {
				t.Errorf("%s %q: the fast path says %v, the reference %v", name, s, ok, want)
			}
		}
	}
	if sure < len(cases)/2 {
		t.Errorf("the fast path decided %d of %d %s, want most", sure, len(cases), what)
	}
}

// fuzzFastIsReference fuzzes fast against the reference, seeded with the
// first 400 cases.
func fuzzFastIsReference(f *testing.F, name string, fast func(string) (ok, sure bool), cases []string) {
	for _, s := range cases[:400] {
		f.Add(s)
	}
	ref := formatReference(f, name)
	f.Fuzz(func(t *testing.T, s string) {
		if ok, sure := fast(s); sure && ok != ref(s) {
			t.Errorf("%s %q: the fast path says %v, the reference %v", name, s, ok, !ok)
		}
	})
}
