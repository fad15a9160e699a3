package emit

import (
	"fmt"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"
)

// A schema pattern the reference validator matches with
// regexp.MustCompile(p).MatchString is written out as a plain Go function
// when it is simple enough to decide without backtracking: anchored at the
// start (^ or \A), optionally at the end ($ or \z: the end of the text, as
// Go's regexp reads them without (?m)), and between them a concatenation of
// literals and single-character classes, each repeated {min,max} (+ * ?).
// The function reads runes as regexp does (utf8.DecodeRuneInString: a byte
// that is not UTF-8 is U+FFFD, one byte wide) and takes each repeated item
// greedily, which is exact when what the item may take is disjoint from
// what may follow it (patternPlan.greedy). Anything else keeps regexp.
// TestPatternMatchers and FuzzPatternMatchers compare every written matcher
// with regexp.

// patternItem is a character set repeated min to max times (max -1:
// unbounded), or, when lit is set, a literal taken byte for byte.
type patternItem struct {
	ranges   []rune // sorted pairs lo, hi
	min, max int
	lit      string
}

// patternPlan is a pattern as a matcher: its items in order, and whether
// the text must end after them.
type patternPlan struct {
	items []patternItem
	end   bool
}

// planPattern plans p as a matcher, or says it cannot (then regexp is kept).
func planPattern(p string) (*patternPlan, bool) {
	re, err := syntax.Parse(p, syntax.Perl) // what regexp.Compile parses with
	if err != nil {
		return nil, false
	}
	var subs []*syntax.Regexp
	if !flatten(re, &subs) || len(subs) == 0 || subs[0].Op != syntax.OpBeginText {
		return nil, false
	}
	for len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs = subs[1:]
	}
	plan := &patternPlan{}
	for len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		subs = subs[:len(subs)-1]
		plan.end = true
	}
	for _, s := range subs {
		if !plan.add(s) {
			return nil, false
		}
	}
	plan.items = mergeLiterals(plan.items)
	return plan, plan.greedy() && plan.writable()
}

// flatten appends to out the concatenated parts of re, through
// non-repeated groups; false for an alternation or anything it cannot see
// through.
func flatten(re *syntax.Regexp, out *[]*syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !flatten(s, out) {
				return false
			}
		}
		return true
	case syntax.OpCapture:
		return flatten(re.Sub[0], out)
	case syntax.OpEmptyMatch:
		return true
	}
	*out = append(*out, re)
	return true
}

// add appends what re matches; false for what a plan cannot hold.
func (pl *patternPlan) add(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			pl.items = append(pl.items, patternItem{ranges: literalSet(r, re.Flags), min: 1, max: 1})
		}
		return true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		set, ok := charSet(re.Sub[0])
		if !ok {
			return false
		}
		it := patternItem{ranges: set}
		switch re.Op {
		case syntax.OpStar:
			it.min, it.max = 0, -1
		case syntax.OpPlus:
			it.min, it.max = 1, -1
		case syntax.OpQuest:
			it.min, it.max = 0, 1
		default:
			it.min, it.max = re.Min, re.Max
		}
		if it.max != 0 {
			pl.items = append(pl.items, it)
		}
		return true
	}
	set, ok := charSet(re)
	if ok {
		pl.items = append(pl.items, patternItem{ranges: set, min: 1, max: 1})
	}
	return ok
}

// charSet is the set of runes a one-character re matches, as sorted
// range pairs.
func charSet(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) != 1 {
			return nil, false
		}
		return literalSet(re.Rune[0], re.Flags), true
	case syntax.OpCharClass:
		return re.Rune, true
	case syntax.OpAnyCharNotNL:
		return []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}, true
	case syntax.OpAnyChar:
		return []rune{0, unicode.MaxRune}, true
	case syntax.OpCapture:
		return charSet(re.Sub[0])
	}
	return nil, false
}

// literalSet is the runes literal r matches: r, and under (?i) its case
// orbit (unicode.SimpleFold, as regexp's matcher folds).
func literalSet(r rune, flags syntax.Flags) []rune {
	runes := []rune{r}
	if flags&syntax.FoldCase != 0 {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			runes = append(runes, f)
		}
	}
	return rangesOf(runes)
}

// rangesOf is the sorted range pairs holding exactly runes.
func rangesOf(runes []rune) []rune {
	in := map[rune]bool{}
	for _, r := range runes {
		in[r] = true
	}
	var out []rune
	for r := rune(0); r <= unicode.MaxRune && len(in) > 0; r++ {
		if !in[r] {
			continue
		}
		lo := r
		for in[r] {
			delete(in, r)
			r++
		}
		out = append(out, lo, r-1)
	}
	return out
}

// mergeLiterals joins runs of single runes matched once, without folding,
// into literal strings (compared as bytes). U+FFFD stays a set: regexp
// matches it to a byte that is not UTF-8 too.
func mergeLiterals(items []patternItem) []patternItem {
	var out []patternItem
	for _, it := range items {
		r, single := it.single()
		if !single || r == utf8.RuneError {
			out = append(out, it)
			continue
		}
		if n := len(out); n > 0 && out[n-1].lit != "" {
			out[n-1].lit += string(r)
			continue
		}
		out = append(out, patternItem{lit: string(r), min: 1, max: 1})
	}
	return out
}

// single reports the rune of an item matching exactly one rune once.
func (it patternItem) single() (rune, bool) {
	if it.lit != "" || it.min != 1 || it.max != 1 || len(it.ranges) != 2 || it.ranges[0] != it.ranges[1] {
		return 0, false
	}
	return it.ranges[0], true
}

// greedy reports whether taking each item greedily decides the pattern:
// an item that may take a varying number of runes takes none that the
// items which may come next (up to the first that must take one, or the
// end) could take. Then every rune has one item that can take it, and
// the greedy walk is the only one.
func (pl *patternPlan) greedy() bool {
	for i, it := range pl.items {
		if it.lit != "" || it.min == it.max {
			continue
		}
		for _, next := range pl.items[i+1:] {
			if overlaps(it.ranges, next.set()) {
				return false
			}
			if next.min > 0 {
				break
			}
		}
	}
	return true
}

// set is the runes that may start what the item takes.
func (it patternItem) set() []rune {
	if it.lit != "" {
		r, _ := utf8.DecodeRuneInString(it.lit)
		return []rune{r, r}
	}
	return it.ranges
}

// overlaps reports whether two sets of sorted range pairs share a rune.
func overlaps(a, b []rune) bool {
	for i := 0; i < len(a); i += 2 {
		for j := 0; j < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}

// match is the plan's walk in Go, the same steps the written function
// takes (the tests compare both with regexp).
func (pl *patternPlan) match(s string) bool {
	i := 0
	for _, it := range pl.items {
		if it.lit != "" {
			if len(s)-i < len(it.lit) || s[i:i+len(it.lit)] != it.lit {
				return false
			}
			i += len(it.lit)
			continue
		}
		n := 0
		for i < len(s) && (it.max < 0 || n < it.max) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !inSet(it.ranges, r) {
				break
			}
			i += w
			n++
		}
		if n < it.min {
			return false
		}
	}
	return !pl.end || i == len(s)
}

func inSet(ranges []rune, r rune) bool {
	for k := 0; k < len(ranges); k += 2 {
		if ranges[k] <= r && r <= ranges[k+1] {
			return true
		}
	}
	return false
}

// maxRangesInline is how many ranges a set's test is written out with;
// an ASCII set of more is a bitmap, any other keeps regexp.
const maxRangesInline = 6

// writable reports whether every set of the plan can be written out.
func (pl *patternPlan) writable() bool {
	for _, it := range pl.items {
		if it.lit == "" && len(it.ranges) > 2*maxRangesInline && !ascii(it.ranges) {
			return false
		}
	}
	return true
}

// ascii reports whether a set holds only runes below utf8.RuneSelf; a
// byte at or above it is then never in the set (it starts a rune >= 0x80
// or is U+FFFD), so the matcher tests bytes.
func ascii(ranges []rune) bool {
	return len(ranges) == 0 || ranges[len(ranges)-1] < utf8.RuneSelf
}

// patternFunc emits func name(s string) bool deciding pattern p by plan.
func patternFunc(f *jen.File, name, p string, pl *patternPlan) {
	var body []jen.Code
	if len(pl.items) == 0 {
		body = []jen.Code{jen.Return(jen.True())}
		if pl.end {
			body = []jen.Code{jen.Return(jen.Len(jen.Id("s")).Op("==").Lit(0))}
		}
	} else {
		body = []jen.Code{jen.Id("i").Op(":=").Lit(0)}
		for _, it := range pl.items {
			body = append(body, itemCode(it))
		}
		end := jen.True()
		if pl.end {
			end = jen.Id("i").Op("==").Len(jen.Id("s"))
		}
		body = append(body, jen.Return(end))
	}
	doc(f.Comment, "%s reports whether s matches the pattern %q as regexp.MustCompile(pattern).MatchString(s) does (the reference validator's RE2), written out: the pattern's classes taken greedily are disjoint from what may follow each.", name, p)
	f.Func().Id(name).Params(jen.Id("s").String()).Bool().Block(body...)
	f.Line()
}

// itemCode is the block matching one item at s[i:], advancing i.
func itemCode(it patternItem) jen.Code {
	if len(it.lit) == 1 {
		return jen.If(jen.Id("i").Op(">=").Len(jen.Id("s")).Op("||").Id("s").Index(jen.Id("i")).Op("!=").LitRune(rune(it.lit[0]))).
			Block(jen.Return(jen.False())).Line().Id("i").Op("++")
	}
	if it.lit != "" {
		n := len(it.lit)
		return jen.If(jen.Len(jen.Id("s")).Op("-").Id("i").Op("<").Lit(n).Op("||").
			Id("s").Index(jen.Id("i").Op(":").Id("i").Op("+").Lit(n)).Op("!=").Lit(it.lit)).
			Block(jen.Return(jen.False())).Line().Id("i").Op("+=").Lit(n)
	}
	once := it.min == 1 && it.max == 1
	miss := jen.Break()
	if once {
		miss = jen.Return(jen.False())
	}
	var take []jen.Code
	if ascii(it.ranges) {
		take = []jen.Code{
			jen.If(jen.Op("!").Parens(setTest(jen.Id("s").Index(jen.Id("i")), it.ranges, false))).Block(miss),
			jen.Id("i").Op("++"),
		}
	} else {
		take = []jen.Code{
			jen.List(jen.Id("r"), jen.Id("w")).Op(":=").Qual(utf8Pkg, "DecodeRuneInString").Call(jen.Id("s").Index(jen.Id("i").Op(":"))),
			jen.If(jen.Op("!").Parens(setTest(jen.Id("r"), it.ranges, true))).Block(miss),
			jen.Id("i").Op("+=").Id("w"),
		}
	}
	if once {
		return jen.Block(append([]jen.Code{jen.If(jen.Id("i").Op(">=").Len(jen.Id("s"))).Block(jen.Return(jen.False()))}, take...)...)
	}
	cond := jen.Id("i").Op("<").Len(jen.Id("s"))
	if it.max >= 0 {
		cond = cond.Op("&&").Id("n").Op("<").Lit(it.max)
	}
	var stmts []jen.Code
	if it.min > 0 || it.max >= 0 {
		stmts = append(stmts, jen.Id("n").Op(":=").Lit(0))
		take = append(take, jen.Id("n").Op("++"))
	}
	stmts = append(stmts, jen.For(cond).Block(take...))
	if it.min > 0 {
		stmts = append(stmts, jen.If(jen.Id("n").Op("<").Lit(it.min)).Block(jen.Return(jen.False())))
	}
	return jen.Block(stmts...)
}

// setTest is the condition that x (a byte, or a rune when isRune) is in
// the set. An ASCII set of many ranges is a 128-bit bitmap.
func setTest(x *jen.Statement, ranges []rune, isRune bool) *jen.Statement {
	if len(ranges) == 0 {
		return jen.False()
	}
	if len(ranges) > 2*maxRangesInline {
		var lo, hi uint64
		for k := 0; k < len(ranges); k += 2 {
			for r := ranges[k]; r <= ranges[k+1]; r++ {
				if r < 64 {
					lo |= 1 << uint(r)
				} else {
					hi |= 1 << uint(r-64)
				}
			}
		}
		word := func(w uint64, off int) *jen.Statement {
			sh := x.Clone()
			if off > 0 {
				sh = sh.Op("-").Lit(off)
			}
			return jen.Lit(0).Op("!=").Parens(jen.Uint64().Call(jen.Id(fmt.Sprintf("%#x", w))).Op(">>").Parens(sh).Op("&").Lit(1))
		}
		return x.Clone().Op("<").Lit(64).Op("&&").Add(word(lo, 0)).Op("||").
			Add(x.Clone()).Op(">=").Lit(64).Op("&&").Add(x.Clone()).Op("<").Lit(128).Op("&&").Add(word(hi, 64))
	}
	var cond *jen.Statement
	for k := 0; k < len(ranges); k += 2 {
		lo, hi := ranges[k], ranges[k+1]
		var c *jen.Statement
		switch {
		case lo == hi:
			c = x.Clone().Op("==").Add(runeLit(lo))
		case lo == 0:
			c = x.Clone().Op("<=").Add(runeLit(hi))
		case hi == unicode.MaxRune && isRune:
			c = x.Clone().Op(">=").Add(runeLit(lo))
		default:
			c = x.Clone().Op(">=").Add(runeLit(lo)).Op("&&").Add(x.Clone()).Op("<=").Add(runeLit(hi))
		}
		if cond == nil {
			cond = c
		} else {
			cond = cond.Op("||").Add(c)
		}
	}
	return cond
}

func runeLit(r rune) *jen.Statement {
	if r > unicode.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
		return jen.Lit(int(r))
	}
	return jen.LitRune(r)
}
