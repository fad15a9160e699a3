package compat

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// boundRules: a reader's bounds must hold for every value the writer's
// allow.
//
//	bound-tightened (backward): the new schema raised a minimum, lowered
//	  a maximum, added one, or added a multipleOf
//	bound-loosened (forward): the new schema lowered a minimum, raised a
//	  maximum or dropped one
func boundRules(d Direction, r, w view) []finding {
	var out []finding
	add := func(keyword string, rv, wv string) {
		old, new := oldNew(d, rv, wv)
		out = append(out, finding{rule: named(d, "bound-tightened", "bound-loosened"),
			detail: fmt.Sprintf("%s was %s, is %s", keyword, old, new)})
	}
	addBound := func(rb, wb bound, keyword string) {
		old, new := oldNew(d, rb.show(keyword), wb.show(keyword))
		out = append(out, finding{rule: named(d, "bound-tightened", "bound-loosened"),
			detail: fmt.Sprintf("was %s, is %s", old, new)})
	}
	if rl, wl := lower(r), lower(w); rl.tighterLow(wl) {
		addBound(rl, wl, "minimum")
	}
	if ru, wu := upper(r), upper(w); ru.tighterHigh(wu) {
		addBound(ru, wu, "maximum")
	}
	for _, k := range sizeKeywords {
		rv, wv := k.get(r), k.get(w)
		if rv == nil {
			continue
		}
		if k.min && *rv > orZero(wv) || !k.min && (wv == nil || *rv < *wv) {
			add(k.name, showInt(rv), showInt(wv))
		}
	}
	if rm := multipleOf(r); rm != nil {
		if wm := multipleOf(w); wm == nil || !new(big.Rat).Quo(wm, rm).IsInt() {
			add("multipleOf", rm.RatString(), showRat(wm))
		}
	}
	return out
}

// bound is a numeric limit: nil value for none.
type bound struct {
	value     *big.Rat
	exclusive bool
}

// show is "minimum 0", "exclusiveMinimum 0" or "no minimum".
func (b bound) show(keyword string) string {
	if b.value == nil {
		return "no " + keyword
	}
	if b.exclusive {
		keyword = "exclusive" + strings.ToUpper(keyword[:1]) + keyword[1:]
	}
	return keyword + " " + b.value.RatString()
}

// tighterLow: the reader's lower bound b rejects a value the writer's o
// allows.
func (b bound) tighterLow(o bound) bool {
	if b.value == nil {
		return false
	}
	if o.value == nil {
		return true
	}
	c := b.value.Cmp(o.value)
	return c > 0 || (c == 0 && b.exclusive && !o.exclusive)
}

// tighterHigh: the reader's upper bound b rejects a value the writer's o
// allows.
func (b bound) tighterHigh(o bound) bool {
	if b.value == nil {
		return false
	}
	if o.value == nil {
		return true
	}
	c := b.value.Cmp(o.value)
	return c < 0 || (c == 0 && b.exclusive && !o.exclusive)
}

// lower is the tightest lower bound of a view.
func lower(v view) bound {
	var out bound
	for _, s := range v {
		for _, b := range []bound{{s.Minimum, false}, {s.ExclusiveMinimum, true}} {
			if b.value != nil && b.tighterLow(out) {
				out = b
			}
		}
	}
	return out
}

// upper is the tightest upper bound of a view.
func upper(v view) bound {
	var out bound
	for _, s := range v {
		for _, b := range []bound{{s.Maximum, false}, {s.ExclusiveMaximum, true}} {
			if b.value != nil && b.tighterHigh(out) {
				out = b
			}
		}
	}
	return out
}

func multipleOf(v view) *big.Rat {
	for _, s := range v {
		if s.MultipleOf != nil {
			return s.MultipleOf
		}
	}
	return nil
}

// sizeKeyword is a limit on a length or a count.
type sizeKeyword struct {
	name string
	min  bool
	of   func(*jsonschema.Schema) *int
}

var sizeKeywords = []sizeKeyword{
	{"minLength", true, func(s *jsonschema.Schema) *int { return s.MinLength }},
	{"maxLength", false, func(s *jsonschema.Schema) *int { return s.MaxLength }},
	{"minItems", true, func(s *jsonschema.Schema) *int { return s.MinItems }},
	{"maxItems", false, func(s *jsonschema.Schema) *int { return s.MaxItems }},
	{"minProperties", true, func(s *jsonschema.Schema) *int { return s.MinProperties }},
	{"maxProperties", false, func(s *jsonschema.Schema) *int { return s.MaxProperties }},
}

// get is the tightest value of the keyword in a view, nil for none.
func (k sizeKeyword) get(v view) *int {
	var out *int
	for _, s := range v {
		x := k.of(s)
		if x != nil && (out == nil || (k.min && *x > *out) || (!k.min && *x < *out)) {
			out = x
		}
	}
	return out
}

func orZero(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func showInt(p *int) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func showRat(r *big.Rat) string {
	if r == nil {
		return "none"
	}
	return r.RatString()
}
