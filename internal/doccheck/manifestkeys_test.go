package doccheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestManifestReferenceNamesEveryKey: every top-level key of the manifest
// (schemas/manifest.schema.json) is in docs/generator.md's reference, in
// its example manifest (a line "key:") or in its table (a row starting
// with `key`): an error that suggests a key sends the reader there.
func TestManifestReferenceNamesEveryKey(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "schemas", "manifest.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &sch); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "generator.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sch.Properties) == 0 {
		t.Fatal("manifest.schema.json lists no properties")
	}
	for key := range sch.Properties {
		q := regexp.QuoteMeta(key)
		inExample := regexp.MustCompile(`(?m)^` + q + `:`).Match(doc)
		inTable := regexp.MustCompile("(?m)^\\| `" + q + "[`.]").Match(doc)
		if !inExample && !inTable {
			t.Errorf("docs/generator.md: the manifest reference has no %q: neither its example nor its table", key)
		}
	}
}
