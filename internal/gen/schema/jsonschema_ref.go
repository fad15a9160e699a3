package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
)

// resolve follows a $ref from document d.
func (l *jsonLoader) resolve(ref string, d *jsonDoc, ptr string) (*jvalue, *jsonDoc, string, bool) {
	uri, frag, _ := strings.Cut(ref, "#")
	target := d
	if uri != "" {
		td, err := l.document(uri, d)
		if err != nil {
			l.fail(d, ptr, "$ref", fmt.Sprintf("$ref %q: %v; add that document to the manifest or beside this file, or define the schema here", ref, err))
			return nil, nil, "", false
		}
		target = td
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		l.fail(d, ptr, "$ref", fmt.Sprintf("$ref %q: bad fragment: %v", ref, err))
		return nil, nil, "", false
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		n := pointerGet(target.root, frag)
		if n == nil {
			l.fail(d, ptr, "$ref", fmt.Sprintf("$ref %q: %s has nothing at #%s; fix the reference", ref, target.path, frag))
			return nil, nil, "", false
		}
		return n, target, "#" + frag, true
	}
	if n, p := findAnchor(target.root, "#", frag); n != nil {
		return n, target, p, true
	}
	l.fail(d, ptr, "$ref", fmt.Sprintf("$ref %q: no $anchor %q in %s; fix the reference", ref, frag, target.path))
	return nil, nil, "", false
}

// document finds the document a $ref's URI part names.
func (l *jsonLoader) document(uri string, from *jsonDoc) (*jsonDoc, error) {
	ru, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("not a URI: %v", err)
	}
	if from.id != nil {
		abs := from.id.ResolveReference(ru)
		abs.Fragment = ""
		if d, ok := l.b.jsonDocs[abs.String()]; ok {
			return d, nil
		}
	}
	if ru.IsAbs() {
		if d, ok := l.b.jsonDocs[ru.String()]; ok {
			return d, nil
		}
		return nil, fmt.Errorf("%s is not one of the manifest's schema files (documents are found by their $id)", uri)
	}
	file := input.Join(path.Dir(from.file), ru.Path)
	if d, ok := l.b.jsonDocs["file:"+file]; ok {
		return d, nil
	}
	data, err := fs.ReadFile(l.b.fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no schema file of the manifest has that $id and %s does not exist", filepath.ToSlash(relTo(from, ru.Path)))
	}
	if err != nil {
		// Refused when read (outside an imported module, not a regular
		// file, too large): the reason, as input gave it.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %w", filepath.ToSlash(relTo(from, ru.Path)), err)
	}
	d, err := l.b.addJSONDoc(relTo(from, ru.Path), file, data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", uri, err)
	}
	return d, nil
}

func relTo(from *jsonDoc, p string) string {
	return filepath.ToSlash(filepath.Join(filepath.Dir(from.path), filepath.FromSlash(p)))
}

// pointerGet follows a JSON pointer ("" is the root).
func pointerGet(n *jvalue, ptr string) *jvalue {
	if ptr == "" {
		return n
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n.kind {
		case jObject:
			n = n.obj[tok]
		case jArray:
			i := 0
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(n.arr) {
				return nil
			}
			n = n.arr[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

// findAnchor finds a subschema with $anchor or $dynamicAnchor name (or a
// draft-7 "$id": "#name").
func findAnchor(n *jvalue, ptr, name string) (*jvalue, string) {
	switch n.kind {
	case jObject:
		if a, ok := n.getStr("$anchor"); ok && a == name {
			return n, ptr
		}
		if a, ok := n.getStr("$id"); ok && a == "#"+name {
			return n, ptr
		}
		if a, ok := n.getStr("$dynamicAnchor"); ok && a == name {
			return n, ptr // a $dynamicAnchor is a plain anchor too
		}
		for _, k := range n.keys {
			if k == "enum" || k == "const" || k == "examples" || k == "default" {
				continue
			}
			if f, p := findAnchor(n.obj[k], ptr+"/"+escapePointer(k), name); f != nil {
				return f, p
			}
		}
	case jArray:
		for i, e := range n.arr {
			if f, p := findAnchor(e, fmt.Sprintf("%s/%d", ptr, i), name); f != nil {
				return f, p
			}
		}
	}
	return nil, ""
}
