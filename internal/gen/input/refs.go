package input

import (
	"bytes"
	"encoding/json"
	"net/url"
	"path"
	"slices"
	"strings"
)

// refFiles are the names of the files that the relative $refs of the JSON
// document data (the file from) name, in the order written, without
// duplicates. A $ref is read the two ways the later stages read it:
// schema.Build joins the URI's path (unescaped) to the file's directory,
// model's bundling joins the URI as written; both are read when they
// differ. An absolute $ref (https://...) names a document by its $id,
// never a file.
func refFiles(from string, data []byte) []string {
	dir := path.Dir(from)
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, ref := range refs(data) {
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

// refs are the values of every "$ref" member of the JSON document data
// whose value is a string, in the order written, duplicate members
// included: a superset of the $refs any later stage follows. A document
// that is not JSON has those before the point where it stops being JSON.
func refs(data []byte) []string {
	type frame struct{ object, name bool } // name: a member name comes next
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	var out []string
	ref := false // the member being read is a $ref
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		top := len(stack) - 1
		switch {
		case tok == json.Delim('}') || tok == json.Delim(']'):
			stack = stack[:top]
		case top >= 0 && stack[top].object && stack[top].name:
			stack[top].name = false
			ref = tok == "$ref"
			continue
		case tok == json.Delim('{'):
			stack = append(stack, frame{object: true, name: true})
			ref = false
			continue
		case tok == json.Delim('['):
			stack = append(stack, frame{})
			ref = false
			continue
		default:
			if s, ok := tok.(string); ok && ref {
				out = append(out, s)
			}
		}
		ref = false
		if top = len(stack) - 1; top >= 0 && stack[top].object {
			stack[top].name = true // the value is read: a name or } comes next
		}
	}
}
