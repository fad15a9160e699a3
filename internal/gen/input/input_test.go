package input

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
	"testing/fstest"
)

func TestResolveAndJoin(t *testing.T) {
	for _, c := range []struct{ dir, p, want string }{
		{"srv/svc", "schemas/a.json", "srv/svc/schemas/a.json"},
		{"srv/svc", "../common/a.json", "srv/common/a.json"},
		{"srv/svc", "/shared/a.json", "shared/a.json"},
		{"srv/svc", "./a.json", "srv/svc/a.json"},
		{".", "a.json", "a.json"},
		{"srv", "../../../a.json", "a.json"}, // ".." stops at the root, as filepath.Join's does
		{"srv", "", "srv"},
	} {
		if got := Resolve(c.dir, c.p); got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.dir, c.p, got, c.want)
		}
	}
	// A $ref's path is joined even when it starts with a slash.
	if got := Join("srv/svc", "/a.json"); got != "srv/svc/a.json" {
		t.Errorf("Join(srv/svc, /a.json) = %q, want srv/svc/a.json", got)
	}
}

func TestRefFiles(t *testing.T) {
	doc := `{"properties": {
		"a": {"$ref": "money.json#/$defs/cents"},
		"b": {"$ref": "../common/money%20v2.json"},
		"c": {"$ref": "https://example.com/x.json"},
		"d": {"$ref": "#/$defs/local"},
		"e": {"items": [{"$ref": "money.json"}]},
		"f": {"$ref": "first.json", "$ref": "last.json"},
		"g": {"enum": ["$ref", {"x": "$ref"}], "const": {"$ref": 1}, "$ref": "g.json"}
	}}`
	got := refFiles("svc/schemas/order.json", []byte(doc))
	want := []string{"svc/schemas/money.json", "svc/common/money v2.json", "svc/common/money%20v2.json",
		"svc/schemas/first.json", "svc/schemas/last.json", "svc/schemas/g.json"}
	if !slices.Equal(got, want) {
		t.Errorf("refFiles = %q, want %q", got, want)
	}
	if got := refFiles("a.json", []byte(`not json`)); got != nil {
		t.Errorf("refFiles of a file that is not JSON = %q, want none", got)
	}
	if got := refFiles("a.json", []byte(`{"$ref": "b.json", "x": [}`)); !slices.Equal(got, []string{"b.json"}) {
		t.Errorf("refFiles of a file that stops being JSON = %q, want b.json", got)
	}
}

// Files answers as the first read did: the bytes, or the error (a missing
// file stays missing), and a directory with its listing.
func TestFilesAnswerAsRead(t *testing.T) {
	src := fstest.MapFS{
		"svc/acemq.yaml": {Data: []byte("version: 1\n")},
		"svc/s/a.json":   {Data: []byte(`{}`)},
	}
	l := NewLoader(src)
	l.File("svc/acemq.yaml")
	l.Schema("svc/s/b.json", true)
	delete(src, "svc/acemq.yaml") // read already: no longer needed
	src["svc/s/b.json"] = &fstest.MapFile{Data: []byte(`{}`)}
	f := l.Files()
	if data, err := fs.ReadFile(f, "svc/acemq.yaml"); err != nil || string(data) != "version: 1\n" {
		t.Errorf("ReadFile(acemq.yaml) = %q, %v", data, err)
	}
	if _, err := fs.ReadFile(f, "svc/s/b.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file missing when read = %v, want fs.ErrNotExist", err)
	}
	if _, err := fs.ReadFile(f, "svc/never.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file never read = %v, want fs.ErrNotExist", err)
	}
	list, err := fs.ReadDir(f, "svc/s")
	if err != nil || len(list) != 1 || list[0].Name() != "a.json" || list[0].IsDir() {
		t.Errorf("ReadDir(svc/s) = %v, %v; want a.json", list, err)
	}
	if st, err := fs.Stat(f, "svc/acemq.yaml"); err != nil || st.Size() != 11 || st.IsDir() {
		t.Errorf("Stat(acemq.yaml) = %v, %v", st, err)
	}
	if got := f.Names(); !slices.Equal(got, []string{"svc/acemq.yaml", "svc/s/b.json"}) {
		t.Errorf("Names = %q", got)
	}
}

func TestMemory(t *testing.T) {
	f := Memory(map[string][]byte{"a/b/c.json": []byte(`{}`), "a/d.json": []byte(`[]`)})
	if err := fstest.TestFS(f, "a/b/c.json", "a/d.json"); err != nil {
		t.Fatal(err)
	}
}
