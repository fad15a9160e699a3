package export

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// pointerSchema rewrites a message's JSON Schema (the bundled text the
// runtime compiles) for a place inside the AsyncAPI document, at the JSON
// pointer at: every $ref becomes a pointer into the document, because an
// AsyncAPI tool resolves a "#/..." reference against the document, not the
// schema, and knows nothing of $id. The bundler embeds each referenced
// file as a resource with its own $id; a reference is resolved against the
// $id in scope, as JSON Schema does, and when it names a resource of the
// schema it becomes "#<that resource's pointer><fragment>". The $id and
// $schema keywords are then dropped: the payload is in AsyncAPI's schema
// format, which reads draft-07 JSON Schema. A reference to nothing in the
// schema is left as written.
func pointerSchema(text, at string) (any, error) {
	var root any
	if err := decodeNumbers(text, &root); err != nil {
		return nil, err
	}
	resources := map[string]string{} // base URI without fragment → pointer
	var collect func(v any, base, ptr string)
	collect = func(v any, base, ptr string) {
		switch t := v.(type) {
		case map[string]any:
			if id, ok := t["$id"].(string); ok {
				base = resolve(base, id)
				if _, seen := resources[base]; !seen {
					resources[base] = ptr
				}
			}
			for _, k := range slices.Sorted(maps.Keys(t)) {
				collect(t[k], base, ptr+"/"+escapePointer(k))
			}
		case []any:
			for i, e := range t {
				collect(e, base, ptr+"/"+itoa(i))
			}
		}
	}
	resources[""] = at
	collect(root, "", at)
	var rewrite func(v any, base string)
	rewrite = func(v any, base string) {
		switch t := v.(type) {
		case map[string]any:
			if id, ok := t["$id"].(string); ok {
				base = resolve(base, id)
			}
			if r, ok := t["$ref"].(string); ok {
				abs := resolve(base, r)
				doc, frag, _ := strings.Cut(abs, "#")
				if p, known := resources[doc]; known && (frag == "" || strings.HasPrefix(frag, "/")) {
					t["$ref"] = "#" + p + frag
				}
			}
			delete(t, "$id")
			delete(t, "$schema")
			for _, e := range t {
				rewrite(e, base)
			}
		case []any:
			for _, e := range t {
				rewrite(e, base)
			}
		}
	}
	rewrite(root, "")
	return root, nil
}

// resolve resolves ref against base as URIs; against no base, ref as it is.
func resolve(base, ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	if base == "" {
		return unescapeFragment(r.String())
	}
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	return unescapeFragment(b.ResolveReference(r).String())
}

// unescapeFragment gives the fragment of u as the JSON pointer it spells.
func unescapeFragment(u string) string {
	doc, frag, ok := strings.Cut(u, "#")
	if !ok {
		return doc
	}
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	return doc + "#" + frag
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
