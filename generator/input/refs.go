package input

import (
	"encoding/json"
	"net/url"
	"path"
	"slices"
	"strings"
)

// refFiles are the names of the files that the relative $refs of the JSON
// document data (the file from) name, in the order met, without
// duplicates. A $ref is read the two ways the later stages read it:
// schema.Build joins the URI's path (unescaped) to the file's directory,
// model's bundling joins the URI as written; both are read when they
// differ. An absolute $ref (https://...) names a document by its $id,
// never a file.
func refFiles(from string, data []byte) []string {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	dir := path.Dir(from)
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, ref := range refs(doc) {
		uri, _, _ := strings.Cut(ref, "#")
		u, err := url.Parse(uri)
		if uri == "" || err != nil || u.IsAbs() {
			continue
		}
		if u.Path != "" {
			add(Join(dir, u.Path))
		}
		if !strings.HasPrefix(uri, "/") {
			add(Join(dir, uri))
		}
	}
	return out
}

// refs are the values of every "$ref" string member in v, depth first,
// members in key order.
func refs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				out = append(out, r)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
