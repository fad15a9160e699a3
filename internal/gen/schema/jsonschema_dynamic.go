package schema

import (
	"fmt"
	"strings"
)

// staticDynamicRefs rewrites each $dynamicRef (2020-12) and $recursiveRef
// (2019-09) of d that can only ever mean one schema into the $ref it is,
// so the rest of the mapper follows it like any other. A $dynamicRef to an
// anchor only one schema of the document declares as $dynamicAnchor (or to
// a JSON pointer), and a $recursiveRef where at most one schema says
// "$recursiveAnchor": true, resolve as $ref does whatever the dynamic
// scope. Any other is refused, naming its pointer: which schema it means
// depends on how validation entered the document, which no Go type can
// follow, and it must not silently become json.RawMessage.
func (b *builder) staticDynamicRefs(d *jsonDoc) {
	dynAnchors := map[string]int{}
	recAnchors := 0
	walkSchema(d.root, "#", func(n *jvalue, _ string) {
		if a, ok := n.getStr("$dynamicAnchor"); ok {
			dynAnchors[a]++
		}
		if r := n.get("$recursiveAnchor"); r != nil && r.kind == jBool && r.b {
			recAnchors++
		}
	})
	walkSchema(d.root, "#", func(n *jvalue, ptr string) {
		if ref, ok := n.getStr("$dynamicRef"); ok {
			_, frag, _ := strings.Cut(ref, "#")
			if frag == "" || strings.HasPrefix(frag, "/") || dynAnchors[frag] <= 1 {
				b.toRef(d, n, ptr, "$dynamicRef", ref)
			} else {
				b.fail(d.path, ptr+"/$dynamicRef", "$dynamicRef", fmt.Sprintf("$dynamicRef %q: %d schemas declare \"$dynamicAnchor\": %q, so which one it means depends on how validation enters the schema, "+
					"which a Go type cannot follow; write \"$ref\" to the schema you mean", ref, dynAnchors[frag], frag))
			}
		}
		if ref, ok := n.getStr("$recursiveRef"); ok {
			if recAnchors <= 1 {
				b.toRef(d, n, ptr, "$recursiveRef", ref)
			} else {
				b.fail(d.path, ptr+"/$recursiveRef", "$recursiveRef", fmt.Sprintf("$recursiveRef %q: %d schemas say \"$recursiveAnchor\": true, so which one it means depends on how validation enters the schema, "+
					"which a Go type cannot follow; write \"$ref\" to the schema you mean", ref, recAnchors))
			}
		}
	})
}

// toRef renames n's keyword to $ref in the mapper's copy of the schema
// (the schema text the runtime validates with is left as written).
func (b *builder) toRef(d *jsonDoc, n *jvalue, ptr, keyword, ref string) {
	if n.get("$ref") != nil {
		b.fail(d.path, ptr+"/"+keyword, keyword, fmt.Sprintf("%s %q beside a $ref: the Go type can follow only one; keep one of them", keyword, ref))
		return
	}
	for i, k := range n.keys {
		if k == keyword {
			n.keys[i] = "$ref"
		}
	}
	n.obj["$ref"] = n.obj[keyword]
	delete(n.obj, keyword)
	b.renamed[d.path+"\x00"+ptr] = keyword
}

// asWritten is an error's pointer, construct and message as the file is
// written: a $ref that toRef made of a $dynamicRef or a $recursiveRef is
// named by its keyword.
func (b *builder) asWritten(path, pointer, construct, msg string) (string, string, string) {
	parent, ok := strings.CutSuffix(pointer, "/$ref")
	kw := b.renamed[path+"\x00"+parent]
	if !ok || kw == "" {
		return pointer, construct, msg
	}
	if construct == "$ref" {
		construct = kw
	}
	if rest, ok := strings.CutPrefix(msg, "$ref "); ok {
		msg = kw + " " + rest
	}
	return parent + "/" + kw, construct, msg
}

// walkSchema calls fn on every object of a schema document, skipping the
// values of keywords that hold data rather than schemas.
func walkSchema(n *jvalue, ptr string, fn func(n *jvalue, ptr string)) {
	switch n.kind {
	case jObject:
		fn(n, ptr)
		for _, k := range n.keys {
			if k == "enum" || k == "const" || k == "examples" || k == "default" {
				continue
			}
			walkSchema(n.obj[k], ptr+"/"+escapePointer(k), fn)
		}
	case jArray:
		for i, e := range n.arr {
			walkSchema(e, fmt.Sprintf("%s/%d", ptr, i), fn)
		}
	}
}
