package model

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
)

// bundleJSONSchema returns the schema text the runtime gets for a JSON
// Schema file: the file as written (asWritten), or, when it refers to other files by a
// relative $ref (money.json, ../common/money.json#/$defs/x), the file with
// each referenced document embedded under $defs as a resource of its own
// ($id set to the URI the reference resolves to). The runtime compiles a
// message's schema alone and loads nothing, so the text must be
// self-contained. A file without an $id gets file:///<its path> as its
// base URI, so that its relative references resolve to the embedded
// resources. An absolute reference (https://...) to a document that is
// one of the manifest's schema files by its $id (ids: URI → file) is
// bundled the same way; any other is left as it is (schema.Build refuses
// it). refs lists the files it embeds, by their names from dir.
func bundleJSONSchema(fsys fs.FS, dir, file string, data []byte, ids map[string]string) (text string, refs []string, err error) {
	root, err := decodeJSON(data)
	if err != nil {
		return "", nil, err
	}
	rootMap, ok := root.(map[string]any)
	if !ok || len(docRefs(root, ids)) == 0 {
		return asWritten(data), nil, nil
	}
	idKey, defsKey := draftKeys(rootMap)
	base, _ := rootMap[idKey].(string)
	if base == "" {
		base = "file:///" + file
		rootMap[idKey] = base
	}
	defs, _ := rootMap[defsKey].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
	}
	type doc struct {
		file, base string
		value      any
	}
	queue := []doc{{file, base, root}}
	seen := map[string]bool{path.Clean(file): true}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		for _, ref := range docRefs(d.value, ids) {
			target, uri := path.Join(path.Dir(d.file), ref), resolveURI(d.base, ref)
			if f, ok := ids[ref]; ok {
				target, uri = f, ref
			}
			if seen[target] {
				continue
			}
			seen[target] = true
			raw, err := fs.ReadFile(fsys, input.Resolve(dir, target))
			if err != nil {
				continue // schema.Build reports the missing file
			}
			v, err := decodeJSON(raw)
			m, ok := v.(map[string]any)
			if err != nil || !ok {
				continue
			}
			own, _ := m[idKey].(string)
			if own == "" {
				m[idKey] = uri
				own = uri
			} else if resolveURI(d.base, own) != uri {
				defs["acemq-bundle-alias:"+target] = map[string]any{idKey: uri, "$ref": own}
			}
			defs["acemq-bundle:"+target] = m
			refs = append(refs, target)
			queue = append(queue, doc{target, own, m})
		}
	}
	rootMap[defsKey] = defs
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ") // one line per value: a change is the lines that changed
	if err := enc.Encode(rootMap); err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(buf.String(), "\n"), refs, nil
}

// draftKeys are the id and definitions keywords of the document's draft.
func draftKeys(doc map[string]any) (idKey, defsKey string) {
	s, _ := doc["$schema"].(string)
	switch {
	case strings.Contains(s, "draft-04"):
		return "id", "definitions"
	case strings.Contains(s, "draft-06"), strings.Contains(s, "draft-07"):
		return "$id", "definitions"
	}
	return "$id", "$defs"
}

// docRefs are the document parts of the relative $refs in v, and of the
// absolute ones ids knows, in the order met (map keys sorted), without
// duplicates.
func docRefs(v any, ids map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				doc, _, _ := strings.Cut(ref, "#")
				u, err := url.Parse(doc)
				relative := err == nil && !u.IsAbs() && !strings.HasPrefix(doc, "/")
				if _, known := ids[doc]; doc != "" && (relative || known) && !seen[doc] {
					seen[doc] = true
					out = append(out, doc)
				}
			}
			for _, k := range sortedKeys(x) {
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

func resolveURI(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// asWritten is a schema file's text as the generated code embeds it: as
// the file has it, line for line (CRLF read as LF, no trailing newline),
// so that the constant shows a schema change as the lines that changed.
func asWritten(data []byte) string {
	return strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
}

// unbundle maps a pointer into a bundled text back to the file it came
// from: "#/$defs/acemq-bundle:schemas~1money.json/properties/cents" is
// "schemas/money.json", "#/properties/cents". ok is false for a pointer
// into the root file.
func unbundle(pointer string) (file, inFile string, ok bool) {
	rest, isPtr := strings.CutPrefix(pointer, "#/")
	if !isPtr {
		return "", "", false
	}
	defs, rest, _ := strings.Cut(rest, "/")
	key, inner, _ := strings.Cut(rest, "/")
	target, bundled := strings.CutPrefix(strings.NewReplacer("~1", "/", "~0", "~").Replace(key), "acemq-bundle:")
	if defs != "$defs" && defs != "definitions" || !bundled {
		return "", "", false
	}
	if inner == "" {
		return target, "#", true
	}
	return target, "#/" + inner, true
}
