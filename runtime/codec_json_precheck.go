package runtime

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The precheck is a check of a parsed document (the tree jsonParseDoc
// reads: map[string]any, []any, json.Number, string, bool, nil) built at
// run time from the reference validator's own compiled schema, for types
// without a generated check. Like a generated check it may only pass a
// document or leave it to the reference: the codec skips
// santhosh-tekuri/jsonschema's Validate when the precheck passes the
// document and calls it otherwise, so every verdict it does not reach and
// every error text are the reference's.
//
// It mirrors the validator's own walk (jsonschema v6.0.x, validator.go)
// keyword by keyword over the exported fields of *jsonschema.Schema, with
// the same regular expressions and format functions; numbers are compared
// as float64 where rounding cannot change the answer and as the
// validator's big.Rat where it can. A subschema with a keyword it does not
// model ($dynamicRef, $recursiveRef, unevaluated*, content*, min/maxContains,
// vocabulary extensions) is undecided, and so is anything uncertain: a
// number past float64's range, a value compared with an enum of another
// kind, a $ref cycle on one value. Inside not, anyOf, oneOf and if it also
// needs to know that a subschema fails; it says so only where it would
// have found the same violation as the validator (preUnknown otherwise).
// TestJSONPrecheckIsReference and FuzzJSONPrecheck hold it to the
// reference.

// preVerdict is what the precheck knows about a value against a schema.
type preVerdict uint8

const (
	prePass    preVerdict = iota // the reference validator passes it
	preFail                      // the reference validator refuses it
	preUnknown                   // the reference decides
)

// preType is a bit set of JSON types, as the validator's type keyword
// names them.
type preType uint8

const (
	preNull preType = 1 << iota
	preBool
	preNumber
	preInteger
	preString
	preArray
	preObject
)

// preBound is a number bound of a schema: the validator's big.Rat and the
// float64 nearest to it.
type preBound struct {
	rat *big.Rat
	f   float64
	// exact: f is the bound itself, so an instance whose text is exactly
	// f (preExactInteger) ties it without the big.Rats.
	exact bool
}

// preNode is one compiled subschema.
type preNode struct {
	unsupported bool
	bool        *bool // a boolean schema
	draft       int

	types  preType // 0: no type keyword
	cnst   *any
	enum   []any
	format *jsonschema.Format
	uuid   func(string) bool // the format is uuid: jsoncheck's copy of the validator's test
	ref    *preNode

	not                *preNode
	allOf, anyOf       []*preNode
	oneOf              []*preNode
	ifs, then, els     *preNode
	hasIf              bool
	minProps, maxProps int // -1: none
	required           []string
	propertyNames      *preNode
	props              map[string]*preNode
	patternProps       []prePattern
	addlFalse          bool
	addl               *preNode
	depRequired        []preDepReq
	depSchemas         []preDepSchema

	minItems, maxItems int // -1: none
	unique             bool
	contains           *preNode
	items              *preNode   // draft < 2020: items as one schema; 2020: items
	itemList           []*preNode // draft < 2020: items as an array; 2020: prefixItems
	addItemsFalse      bool
	addItems           *preNode

	minLen, maxLen int // -1: none
	pattern        jsonschema.Regexp

	minimum, maximum, exMinimum, exMaximum *preBound
	multipleOf                             *big.Rat
	multipleInt                            int64 // multipleOf as an int64, 0 when it is not one
	hasNumber                              bool
}

type prePattern struct {
	re   jsonschema.Regexp
	node *preNode
}

type preDepReq struct {
	prop    string
	missing []string
}

type preDepSchema struct {
	prop string
	node *preNode
}

// jsonPrecheck is the precheck of one compiled schema.
type jsonPrecheck struct {
	root *preNode
	// scan: the scan over the body's bytes follows every node
	// (codec_json_prescan.go).
	scan bool
}

// newJSONPrecheck builds the precheck of sch.
func newJSONPrecheck(sch *jsonschema.Schema) *jsonPrecheck {
	b := preBuilder{nodes: map[*jsonschema.Schema]*preNode{}}
	root := b.node(sch)
	return &jsonPrecheck{root: root, scan: preScannable(root)}
}

type preBuilder struct {
	nodes map[*jsonschema.Schema]*preNode
}

func (b *preBuilder) list(schs []*jsonschema.Schema) []*preNode {
	if len(schs) == 0 {
		return nil
	}
	out := make([]*preNode, len(schs))
	for i, s := range schs {
		out[i] = b.node(s)
	}
	return out
}

// node compiles s once (a schema reached twice, or recursively, is one
// node); a nil s is nil.
func (b *preBuilder) node(s *jsonschema.Schema) *preNode {
	if s == nil {
		return nil
	}
	if n, ok := b.nodes[s]; ok {
		return n
	}
	n := &preNode{draft: s.DraftVersion, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}
	b.nodes[s] = n
	if s.Bool != nil {
		n.bool = s.Bool
		return n
	}
	if s.RecursiveRef != nil || s.DynamicRef != nil || s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
		len(s.Extensions) > 0 || s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MinContains != nil || s.MaxContains != nil {
		n.unsupported = true
		return n
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				n.types |= preNull
			case "boolean":
				n.types |= preBool
			case "number":
				n.types |= preNumber
			case "integer":
				n.types |= preInteger
			case "string":
				n.types |= preString
			case "array":
				n.types |= preArray
			case "object":
				n.types |= preObject
			}
		}
	}
	n.cnst = s.Const
	if s.Enum != nil {
		n.enum = s.Enum.Values
	}
	if s.Format != nil {
		n.format = s.Format
		if s.Format.Name == "uuid" {
			n.uuid = jsoncheck.Format("uuid")
		}
	}
	n.ref = b.node(s.Ref)
	n.not = b.node(s.Not)
	n.allOf, n.anyOf, n.oneOf = b.list(s.AllOf), b.list(s.AnyOf), b.list(s.OneOf)
	if s.If != nil {
		n.hasIf = true
		n.ifs, n.then, n.els = b.node(s.If), b.node(s.Then), b.node(s.Else)
	}

	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}
	n.required = s.Required
	n.propertyNames = b.node(s.PropertyNames)
	if len(s.Properties) > 0 {
		n.props = make(map[string]*preNode, len(s.Properties))
		for k, v := range s.Properties {
			if v == nil {
				n.unsupported = true
				return n
			}
			n.props[k] = b.node(v)
		}
	}
	for re, v := range s.PatternProperties {
		n.patternProps = append(n.patternProps, prePattern{re: re, node: b.node(v)})
	}
	if !b.additional(s.AdditionalProperties, &n.addlFalse, &n.addl) {
		n.unsupported = true
		return n
	}
	for p, dep := range s.Dependencies {
		switch dep := dep.(type) {
		case []string:
			n.depRequired = append(n.depRequired, preDepReq{p, dep})
		case *jsonschema.Schema:
			if dep == nil {
				n.unsupported = true
				return n
			}
			n.depSchemas = append(n.depSchemas, preDepSchema{p, b.node(dep)})
		default:
			n.unsupported = true
			return n
		}
	}
	if s.DraftVersion != 4 && s.DraftVersion != 6 { // the validator reads these from draft 7 on
		for p, req := range s.DependentRequired {
			n.depRequired = append(n.depRequired, preDepReq{p, req})
		}
		for p, dep := range s.DependentSchemas {
			n.depSchemas = append(n.depSchemas, preDepSchema{p, b.node(dep)})
		}
	}
	if s.DraftVersion == 4 {
		n.propertyNames = nil // the validator stops before it in draft 4
	}

	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	n.unique = s.UniqueItems
	n.contains = b.node(s.Contains)
	if s.DraftVersion < 2020 {
		switch items := s.Items.(type) {
		case nil:
		case *jsonschema.Schema:
			if items == nil {
				n.unsupported = true
				return n
			}
			n.items = b.node(items)
		case []*jsonschema.Schema:
			n.itemList = b.list(items)
			if n.itemList == nil {
				n.itemList = []*preNode{}
			}
		default:
			n.unsupported = true
			return n
		}
		if !b.additional(s.AdditionalItems, &n.addItemsFalse, &n.addItems) {
			n.unsupported = true
			return n
		}
	} else {
		n.itemList = b.list(s.PrefixItems)
		n.items = b.node(s.Items2020)
	}

	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	n.pattern = s.Pattern

	n.minimum, n.maximum = preBoundOf(s.Minimum), preBoundOf(s.Maximum)
	n.exMinimum, n.exMaximum = preBoundOf(s.ExclusiveMinimum), preBoundOf(s.ExclusiveMaximum)
	if s.MultipleOf != nil {
		if s.MultipleOf.Sign() <= 0 {
			n.unsupported = true
			return n
		}
		n.multipleOf = s.MultipleOf
		if s.MultipleOf.IsInt() && s.MultipleOf.Num().IsInt64() {
			n.multipleInt = s.MultipleOf.Num().Int64()
		}
	}
	n.hasNumber = n.minimum != nil || n.maximum != nil || n.exMinimum != nil || n.exMaximum != nil || n.multipleOf != nil
	return n
}

// additional reads additionalProperties or additionalItems: nil, a bool
// or a schema; false when it is something else.
func (b *preBuilder) additional(v any, isFalse *bool, node **preNode) bool {
	switch v := v.(type) {
	case nil:
	case bool:
		*isFalse = !v
	case *jsonschema.Schema:
		if v == nil {
			return false
		}
		*node = b.node(v)
	default:
		return false
	}
	return true
}

func preBoundOf(r *big.Rat) *preBound {
	if r == nil {
		return nil
	}
	f, exact := r.Float64()
	return &preBound{rat: r, f: f, exact: exact}
}

// prechecker walks one document; pooled for its chain.
type prechecker struct {
	// chain is the nodes applied to each value on the way down, the
	// current value's from base on: the validator refuses a schema applied
	// twice to one value ($ref cycle), the precheck leaves it undecided.
	chain []*preNode
}

var precheckerPool = sync.Pool{New: func() any { return &prechecker{chain: make([]*preNode, 0, 32)} }}

// passes reports whether the reference validator passes doc; false is
// "ask it".
func (p *jsonPrecheck) passes(doc any) bool {
	return p.verdict(doc) == prePass
}

// verdict is the precheck's whole answer (the tests read preFail too).
func (p *jsonPrecheck) verdict(doc any) preVerdict {
	pc := precheckerPool.Get().(*prechecker)
	v := pc.check(p.root, doc, 0)
	clear(pc.chain[:cap(pc.chain)])
	pc.chain = pc.chain[:0]
	precheckerPool.Put(pc)
	return v
}

// preAny is the verdict on "at least one of xs": pass at the first that
// passes, else unknown if any is unknown, else fail.
func preAny[T any](xs []T, f func(T) preVerdict) preVerdict {
	r := preFail
	for _, x := range xs {
		switch f(x) {
		case prePass:
			return prePass
		case preUnknown:
			r = preUnknown
		}
	}
	return r
}

// preAnd folds verdicts of keywords that must all pass.
type preAnd struct{ v preVerdict }

// add folds in r, and says whether the walk can stop (the value fails).
func (a *preAnd) add(r preVerdict) bool {
	switch r {
	case preFail:
		a.v = preFail
		return true
	case preUnknown:
		a.v = preUnknown
	}
	return false
}

// check is the verdict of node n on v, as the validator's validate();
// base is where v's part of the chain starts.
func (pc *prechecker) check(n *preNode, v any, base int) preVerdict {
	if n.bool != nil {
		if *n.bool {
			return prePass
		}
		return preFail
	}
	for _, m := range pc.chain[base:] {
		if m == n {
			return preUnknown
		}
	}
	if n.unsupported || len(pc.chain) > 256 {
		return preUnknown
	}
	pc.chain = append(pc.chain, n)
	r := pc.check1(n, v, base)
	pc.chain = pc.chain[:len(pc.chain)-1]
	return r
}

func (pc *prechecker) check1(n *preNode, v any, base int) preVerdict {
	var all preAnd

	// type
	if n.types != 0 {
		r := preTypeVerdict(n.types, v)
		if all.add(r) {
			return preFail
		}
	}
	// const, enum
	if n.cnst != nil {
		if all.add(preEqual(v, *n.cnst)) {
			return preFail
		}
	}
	if n.enum != nil {
		if all.add(preAny(n.enum, func(e any) preVerdict { return preEqual(v, e) })) {
			return preFail
		}
	}
	// format
	if n.format != nil {
		var ok bool
		if s, isStr := v.(string); isStr && n.uuid != nil {
			ok = n.uuid(s)
		} else {
			ok = n.format.Validate(v) == nil
		}
		if !ok {
			return preFail
		}
	}
	// $ref
	if n.ref != nil {
		r := pc.check(n.ref, v, base)
		if n.draft < 2019 { // the validator ignores $ref's siblings
			if r == preFail {
				return preFail
			}
			return max(r, all.v)
		}
		if all.add(r) {
			return preFail
		}
	}

	switch v := v.(type) {
	case map[string]any:
		if all.add(pc.object(n, v, base)) {
			return preFail
		}
	case []any:
		if all.add(pc.array(n, v)) {
			return preFail
		}
	case string:
		if all.add(n.str(v)) {
			return preFail
		}
	case json.Number:
		if n.hasNumber && all.add(n.number(v)) {
			return preFail
		}
	}

	// not, allOf, anyOf, oneOf, if
	if n.not != nil {
		switch pc.check(n.not, v, base) {
		case prePass:
			return preFail
		case preUnknown:
			all.add(preUnknown)
		}
	}
	for _, s := range n.allOf {
		if all.add(pc.check(s, v, base)) {
			return preFail
		}
	}
	if len(n.anyOf) > 0 {
		if all.add(preAny(n.anyOf, func(s *preNode) preVerdict { return pc.check(s, v, base) })) {
			return preFail
		}
	}
	if len(n.oneOf) > 0 {
		passed, unknown := 0, 0
		for _, s := range n.oneOf {
			switch pc.check(s, v, base) {
			case prePass:
				passed++
			case preUnknown:
				unknown++
			}
			if passed > 1 {
				break
			}
		}
		switch {
		case passed > 1 || passed+unknown == 0:
			return preFail
		case passed == 1 && unknown == 0:
		default:
			all.add(preUnknown)
		}
	}
	if n.hasIf {
		then := func() preVerdict {
			if n.then == nil {
				return prePass
			}
			return pc.check(n.then, v, base)
		}
		els := func() preVerdict {
			if n.els == nil {
				return prePass
			}
			return pc.check(n.els, v, base)
		}
		var r preVerdict
		switch pc.check(n.ifs, v, base) {
		case prePass:
			r = then()
		case preFail:
			r = els()
		default:
			if t, e := then(), els(); t == e {
				r = t
			} else {
				r = preUnknown
			}
		}
		if all.add(r) {
			return preFail
		}
	}
	return all.v
}

// preTypeVerdict is the type keyword's verdict on v.
func preTypeVerdict(types preType, v any) preVerdict {
	var t preType
	switch v := v.(type) {
	case nil:
		t = preNull
	case bool:
		t = preBool
	case string:
		t = preString
	case []any:
		t = preArray
	case map[string]any:
		t = preObject
	case json.Number:
		if types&preNumber != 0 {
			return prePass
		}
		if types&preInteger == 0 {
			return preFail
		}
		return preIsInteger(v)
	default:
		return preUnknown
	}
	if types&t != 0 {
		return prePass
	}
	return preFail
}

// preIsInteger is the validator's isInteger on a json.Number: its text as
// a big.Rat is an integer. A text without a fraction or an exponent is one;
// others are worked out as the validator does, unless they are past
// float64's range.
func preIsInteger(v json.Number) preVerdict {
	s := string(v)
	if !strings.ContainsAny(s, ".eE") {
		return prePass
	}
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return preUnknown
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return preUnknown
	}
	if r.IsInt() {
		return prePass
	}
	return preFail
}

// preEqual is the validator's equals(v, w) for a value of the document
// and a value of the schema (const, enum) or of the document (uniqueItems).
func preEqual(v, w any) preVerdict {
	switch v := v.(type) {
	case nil:
		return preBoolVerdict(w == nil)
	case bool:
		x, ok := w.(bool)
		return preBoolVerdict(ok && x == v)
	case string:
		x, ok := w.(string)
		return preBoolVerdict(ok && x == v)
	case json.Number:
		switch x := w.(type) {
		case json.Number:
			return preNumbersEqual(string(v), string(x))
		case nil, bool, string, []any, map[string]any:
			return preFail
		}
		return preUnknown
	case []any:
		x, ok := w.([]any)
		if !ok {
			return preKnownKind(w)
		}
		if len(x) != len(v) {
			return preFail
		}
		r := prePass
		for i := range v {
			switch preEqual(v[i], x[i]) {
			case preFail:
				return preFail
			case preUnknown:
				r = preUnknown
			}
		}
		return r
	case map[string]any:
		x, ok := w.(map[string]any)
		if !ok {
			return preKnownKind(w)
		}
		if len(x) != len(v) {
			return preFail
		}
		r := prePass
		for k, a := range v {
			b, ok := x[k]
			if !ok {
				return preFail
			}
			switch preEqual(a, b) {
			case preFail:
				return preFail
			case preUnknown:
				r = preUnknown
			}
		}
		return r
	}
	return preUnknown
}

// preKnownKind is preFail for a value of a kind the tree holds (so that
// it is not equal to an array or object of another kind), else preUnknown.
func preKnownKind(w any) preVerdict {
	switch w.(type) {
	case nil, bool, string, json.Number, []any, map[string]any:
		return preFail
	}
	return preUnknown
}

func preBoolVerdict(b bool) preVerdict {
	if b {
		return prePass
	}
	return preFail
}

// preNumbersEqual compares two JSON number texts as the validator does
// (as big.Rats): the same text is the same number; numbers whose float64s
// differ differ (rounding to the nearest float64 keeps the order); the
// rest are compared as big.Rats.
func preNumbersEqual(a, b string) preVerdict {
	if a == b {
		return prePass
	}
	fa, errA := strconv.ParseFloat(a, 64)
	fb, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil {
		return preUnknown
	}
	if fa != fb {
		return preFail
	}
	ra, okA := new(big.Rat).SetString(a)
	rb, okB := new(big.Rat).SetString(b)
	if !okA || !okB {
		return preUnknown
	}
	return preBoolVerdict(ra.Cmp(rb) == 0)
}

// str is the string keywords' verdict: minLength, maxLength (runes, as
// the validator counts them), pattern (the validator's own regexp).
func (n *preNode) str(s string) preVerdict {
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
			return preFail
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return preFail
	}
	return prePass
}

// number is the number keywords' verdict on v. A comparison is read from
// the float64s when they differ (the nearest float64 of each side keeps
// their order, so differing float64s order the numbers as the validator's
// big.Rats do) and from the big.Rats when they are equal, but for an
// integer text of at most 15 digits against a bound its float64 holds
// exactly, which equal float64s show equal; a text past float64's range
// is undecided.
func (n *preNode) number(v json.Number) preVerdict {
	s := string(v)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return preUnknown
	}
	var rat *big.Rat
	cmp := func(b *preBound) int {
		switch {
		case f < b.f:
			return -1
		case f > b.f:
			return 1
		}
		if b.exact && preExactInteger(s) {
			return 0
		}
		if rat == nil {
			rat, _ = new(big.Rat).SetString(s)
		}
		if rat == nil {
			return 2
		}
		return rat.Cmp(b.rat)
	}
	for _, c := range [...]struct {
		b    *preBound
		fail func(int) bool
	}{
		{n.minimum, func(c int) bool { return c < 0 }},
		{n.maximum, func(c int) bool { return c > 0 }},
		{n.exMinimum, func(c int) bool { return c <= 0 }},
		{n.exMaximum, func(c int) bool { return c >= 0 }},
	} {
		if c.b == nil {
			continue
		}
		r := cmp(c.b)
		if r == 2 {
			return preUnknown
		}
		if c.fail(r) {
			return preFail
		}
	}
	if n.multipleOf != nil {
		if n.multipleInt != 0 && !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return preBoolVerdict(i%n.multipleInt == 0)
			}
		}
		if rat == nil {
			rat, _ = new(big.Rat).SetString(s)
		}
		if rat == nil {
			return preUnknown
		}
		return preBoolVerdict(new(big.Rat).Quo(rat, n.multipleOf).IsInt())
	}
	return prePass
}

// preExactInteger reports whether s is an integer text of at most 15
// digits, which its float64 holds exactly (|s| < 2^53): two such numbers
// with equal float64s are equal as the validator's big.Rats.
func preExactInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// object is the object keywords' verdict, in the validator's order; base
// is where obj's part of the chain starts (its dependent schemas apply to
// obj itself).
func (pc *prechecker) object(n *preNode, obj map[string]any, base int) preVerdict {
	if n.minProps >= 0 && len(obj) < n.minProps || n.maxProps >= 0 && len(obj) > n.maxProps {
		return preFail
	}
	for _, p := range n.required {
		if _, ok := obj[p]; !ok {
			return preFail
		}
	}
	var all preAnd
	for _, d := range n.depRequired {
		if _, ok := obj[d.prop]; ok {
			for _, p := range d.missing {
				if _, ok := obj[p]; !ok {
					return preFail
				}
			}
		}
	}
	for _, d := range n.depSchemas {
		if _, ok := obj[d.prop]; ok {
			if all.add(pc.check(d.node, obj, base)) {
				return preFail
			}
		}
	}
	child := len(pc.chain)
	for k, val := range obj {
		evaluated := false
		if s, ok := n.props[k]; ok {
			evaluated = true
			if all.add(pc.check(s, val, child)) {
				return preFail
			}
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(k) {
				evaluated = true
				if all.add(pc.check(pp.node, val, child)) {
					return preFail
				}
			}
		}
		if !evaluated {
			if n.addlFalse {
				return preFail
			}
			if n.addl != nil && all.add(pc.check(n.addl, val, child)) {
				return preFail
			}
		}
	}
	if n.propertyNames != nil {
		for k := range obj {
			// the validator checks each name as a document of its own
			if all.add(pc.check(n.propertyNames, k, len(pc.chain))) {
				return preFail
			}
		}
	}
	return all.v
}

// array is the array keywords' verdict, in the validator's order.
func (pc *prechecker) array(n *preNode, arr []any) preVerdict {
	if n.minItems >= 0 && len(arr) < n.minItems || n.maxItems >= 0 && len(arr) > n.maxItems {
		return preFail
	}
	var all preAnd
	if n.unique && len(arr) > 1 {
		if all.add(preUnique(arr)) {
			return preFail
		}
	}
	base := len(pc.chain)
	evaluated := 0
	if n.itemList != nil {
		evaluated = min(len(n.itemList), len(arr))
		for i, item := range arr[:evaluated] {
			if all.add(pc.check(n.itemList[i], item, base)) {
				return preFail
			}
		}
	}
	if n.items != nil && (n.draft >= 2020 || n.itemList == nil) {
		for _, item := range arr[evaluated:] {
			if all.add(pc.check(n.items, item, base)) {
				return preFail
			}
		}
		evaluated = len(arr)
	}
	if n.draft < 2020 && n.itemList != nil {
		if n.addItemsFalse && evaluated != len(arr) {
			return preFail
		}
		if n.addItems != nil {
			for _, item := range arr[evaluated:] {
				if all.add(pc.check(n.addItems, item, base)) {
					return preFail
				}
			}
		}
	}
	if n.contains != nil {
		r := preFail
		for _, item := range arr {
			switch pc.check(n.contains, item, base) {
			case prePass:
				r = prePass
			case preUnknown:
				r = preUnknown
			}
			if r == prePass {
				break
			}
		}
		if all.add(r) {
			return preFail
		}
	}
	return all.v
}

// preUnique is uniqueItems' verdict: any two items equal fail it. Up to
// 64 items are compared pairwise; more are undecided unless they are all
// strings.
func preUnique(arr []any) preVerdict {
	if len(arr) > 64 {
		seen := make(map[string]struct{}, len(arr))
		for _, item := range arr {
			s, ok := item.(string)
			if !ok {
				return preUnknown
			}
			if _, dup := seen[s]; dup {
				return preFail
			}
			seen[s] = struct{}{}
		}
		return prePass
	}
	r := prePass
	for i := 1; i < len(arr); i++ {
		for j := 0; j < i; j++ {
			switch preEqual(arr[i], arr[j]) {
			case prePass:
				return preFail
			case preUnknown:
				r = preUnknown
			}
		}
	}
	return r
}
