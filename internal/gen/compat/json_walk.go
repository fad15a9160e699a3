package compat

import "github.com/santhosh-tekuri/jsonschema/v6"

// jsonChecker walks a reader's and a writer's schema side by side, in one
// direction, and finds what the writer's schema allows that the reader's
// rejects.
type jsonChecker struct {
	dir    Direction
	memo   map[string][]finding // reader|writer → findings; nil while in progress
	copies map[*jsonschema.Schema]*jsonschema.Schema
}

// check compares a reader's view with a writer's. A pair met again while
// being checked (a recursive schema) adds nothing: it is being checked.
func (c *jsonChecker) check(r, w view) []finding {
	key := r.key() + "|" + w.key()
	if fs, ok := c.memo[key]; ok {
		return clone(fs)
	}
	c.memo[key] = nil
	fs := c.checkUnions(r, w)
	c.memo[key] = fs
	return clone(fs)
}

func clone(fs []finding) []finding { return append([]finding(nil), fs...) }

// checkUnions handles anyOf and oneOf: every alternative of the writer
// must be read by some alternative of the reader. When none reads it, the
// findings reported are those of the reader alternative closest to it
// (the fewest findings).
func (c *jsonChecker) checkUnions(r, w view) []finding {
	if c.copies == nil {
		c.copies = map[*jsonschema.Schema]*jsonschema.Schema{}
	}
	bare := bareOf(c.copies)
	ws := w.branches(bare)
	if ws == nil {
		ws = []view{w}
	}
	rs := r.branches(bare)
	var out []finding
	for _, wb := range ws {
		if rs == nil {
			out = append(out, c.compare(r, wb)...)
			continue
		}
		var best []finding
		for i, rb := range rs {
			fs := c.check(rb, wb)
			if len(fs) == 0 {
				best = nil
				break
			}
			if i == 0 || len(fs) < len(best) {
				best = fs
			}
		}
		out = append(out, best...)
	}
	return out
}

// compare runs every rule on a reader and a writer without alternatives.
func (c *jsonChecker) compare(r, w view) []finding {
	if w.never() {
		return nil // the writer writes nothing here
	}
	if r.never() {
		return []finding{{rule: named(c.dir, "type-narrowed", "type-widened"),
			detail: "one side is the schema false, which accepts nothing"}}
	}
	var out []finding
	out = append(out, typeRule(c.dir, r, w)...)
	out = append(out, enumRule(c.dir, r, w)...)
	out = append(out, formatRule(c.dir, r, w)...)
	out = append(out, patternRule(c.dir, r, w)...)
	out = append(out, boundRules(c.dir, r, w)...)
	out = append(out, c.objectRules(r, w)...)
	out = append(out, c.arrayRules(r, w)...)
	return out
}
