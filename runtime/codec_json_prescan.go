package runtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// The precheck's scan is the precheck (codec_json_precheck.go) walked
// over a body's bytes instead of over the tree jsonParseDoc builds from
// them: for a schema whose every node it follows, a body it passes skips
// the parse, the tree's allocations and the reference validator alike.
// It only ever passes: a body it is unsure of (not JSON, a keyword it
// does not follow, a value the precheck would not pass, anything it
// cannot read without the tree) is "not taken", and the tree, the
// precheck and the validator decide it as before, so every refusal and
// every error text are theirs.
//
// It applies the precheck's own functions to the same values the tree
// would hold (a string's text, unescaped by encoding/json when it has an
// escape; a number's text as the json.Number; true, false, nil), so a
// body it passes is one the tree's precheck passes. What it does not
// follow, because the tree's answer needs the whole object or array at
// once or a verdict of "fails" (not, oneOf, if): minProperties,
// maxProperties, dependentRequired, dependentSchemas, uniqueItems,
// contains, not, oneOf, if/then/else, and const or enum on an object or an
// array. A repeated key (the tree keeps the last) passes only if each of
// its values does. TestJSONPrescanIsPrecheck and FuzzJSONPrescan hold it
// to the precheck and the reference validator.

// preScanMaxDepth bounds how deeply nested a body the scan follows.
const preScanMaxDepth = 64

// preScannable reports whether the scan follows every node reachable from
// root; when it does not, the codec does not scan (the tree would be
// built after a scan that cannot pass).
func preScannable(root *preNode) bool {
	seen := map[*preNode]bool{}
	var ok func(n *preNode) bool
	ok = func(n *preNode) bool {
		if n == nil || seen[n] {
			return true
		}
		seen[n] = true
		if n.bool != nil {
			return true
		}
		if n.unsupported || n.not != nil || len(n.oneOf) > 0 || n.hasIf || n.minProps >= 0 || n.maxProps >= 0 ||
			len(n.depRequired) > 0 || len(n.depSchemas) > 0 || n.unique || n.contains != nil || len(n.required) > 64 {
			return false
		}
		kids := []*preNode{n.ref, n.propertyNames, n.addl, n.items, n.addItems}
		kids = append(append(append(kids, n.allOf...), n.anyOf...), n.itemList...)
		for _, p := range n.props {
			kids = append(kids, p)
		}
		for _, pp := range n.patternProps {
			kids = append(kids, pp.node)
		}
		for _, k := range kids {
			if !ok(k) {
				return false
			}
		}
		return true
	}
	return ok(root)
}

// preScan is one walk of a body; pooled for its chain.
type preScan struct {
	b     []byte
	i     int
	depth int
	// chain is the nodes applied to the current value, as the
	// prechecker's: a node applied twice to one value is not taken.
	chain []*preNode
}

var preScanPool = sync.Pool{New: func() any { return &preScan{chain: make([]*preNode, 0, 32)} }}

// scanPasses reports whether the reference validator passes body, read
// as JSON, without building its tree; false is "ask the tree".
func (p *jsonPrecheck) scanPasses(body []byte) bool {
	if !p.scan {
		return false
	}
	s := preScanPool.Get().(*preScan)
	s.b, s.i, s.depth = body, 0, 0
	ok := s.value(p.root, 0) && s.end()
	clear(s.chain[:cap(s.chain)])
	s.b, s.chain = nil, s.chain[:0]
	preScanPool.Put(s)
	return ok
}

// end reports whether only whitespace follows.
func (s *preScan) end() bool {
	s.ws()
	return s.i == len(s.b)
}

func (s *preScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads the value at s.i and reports whether n passes it (a nil n:
// whether it is JSON); base is where the value's part of the chain
// starts. After false, s.i is anywhere.
func (s *preScan) value(n *preNode, base int) bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	if n == nil || n.bool != nil {
		return (n == nil || *n.bool) && s.skip()
	}
	for _, m := range s.chain[base:] {
		if m == n {
			return false
		}
	}
	if n.unsupported || len(s.chain) > 256 {
		return false
	}
	s.chain = append(s.chain, n)
	ok := s.value1(n, base)
	s.chain = s.chain[:len(s.chain)-1]
	return ok
}

// value1 is check1 over the bytes: every keyword of n passes the value.
func (s *preScan) value1(n *preNode, base int) bool {
	start, depth := s.i, s.depth
	switch c := s.b[s.i]; {
	case c == '{':
		if !s.scalarKeywords(n, preObject, preScalar{}) || !s.object(n) {
			return false
		}
	case c == '[':
		if !s.scalarKeywords(n, preArray, preScalar{}) || !s.array(n) {
			return false
		}
	default:
		v, ok := s.scalar()
		if !ok || !s.scalarKeywords(n, v.t, v) {
			return false
		}
		switch v.t {
		case preString:
			if n.str(v.s) != prePass {
				return false
			}
		case preNumber:
			if n.hasNumber && n.number(json.Number(v.s)) != prePass {
				return false
			}
		}
	}
	end := s.i
	if !s.applied(n, base, start, depth) {
		return false
	}
	s.i, s.depth = end, depth
	return true
}

// applied reports whether the schemas n applies to the value at start
// pass it: $ref, allOf, anyOf (each reads the value again).
func (s *preScan) applied(n *preNode, base, start, depth int) bool {
	if n.ref != nil {
		s.i, s.depth = start, depth
		if !s.value(n.ref, base) {
			return false
		}
		if n.draft < 2019 { // the validator ignores $ref's siblings
			return true
		}
	}
	for _, m := range n.allOf {
		s.i, s.depth = start, depth
		if !s.value(m, base) {
			return false
		}
	}
	if len(n.anyOf) == 0 {
		return true
	}
	for _, m := range n.anyOf {
		s.i, s.depth = start, depth
		if s.value(m, base) {
			return true
		}
	}
	return false
}

// scalarKeywords is the type, const, enum and format keywords on a value
// of type t (v: the value, for a scalar; unused for an object or an array).
func (s *preScan) scalarKeywords(n *preNode, t preType, v preScalar) bool {
	if n.types != 0 && n.types&t == 0 {
		if t != preNumber || n.types&preInteger == 0 || preIsInteger(json.Number(v.s)) != prePass {
			return false
		}
	}
	composite := t == preObject || t == preArray
	if n.cnst != nil && (composite || v.equal(*n.cnst) != prePass) {
		return false
	}
	if n.enum != nil && (composite || preAny(n.enum, v.equal) != prePass) {
		return false
	}
	if n.format != nil {
		if composite {
			return false
		}
		if v.t == preString && n.uuid != nil {
			return n.uuid(v.s)
		}
		return n.format.Validate(v.value()) == nil
	}
	return true
}

// preScalar is a string, number, boolean or null read by the scan.
type preScalar struct {
	t preType // preString, preNumber, preBool or preNull
	s string  // a string's value, a number's text
	b bool
}

// value is the scalar as the tree holds it: string, json.Number, bool, nil.
func (v preScalar) value() any {
	switch v.t {
	case preString:
		return v.s
	case preNumber:
		return json.Number(v.s)
	case preBool:
		return v.b
	}
	return nil
}

// equal is preEqual(v.value(), w) without boxing v.
func (v preScalar) equal(w any) preVerdict {
	switch v.t {
	case preString:
		x, ok := w.(string)
		return preBoolVerdict(ok && x == v.s)
	case preBool:
		x, ok := w.(bool)
		return preBoolVerdict(ok && x == v.b)
	case preNull:
		return preBoolVerdict(w == nil)
	}
	return preEqual(json.Number(v.s), w)
}

// scalar reads a string, number, true, false or null.
func (s *preScan) scalar() (preScalar, bool) {
	switch c := s.b[s.i]; {
	case c == '"':
		str, ok := s.str()
		return preScalar{t: preString, s: str}, ok
	case c == '-' || c >= '0' && c <= '9':
		num, ok := s.number()
		return preScalar{t: preNumber, s: num}, ok
	case s.lit("true"):
		return preScalar{t: preBool, b: true}, true
	case s.lit("false"):
		return preScalar{t: preBool}, true
	case s.lit("null"):
		return preScalar{t: preNull}, true
	}
	return preScalar{}, false
}

// lit reads the literal w.
func (s *preScan) lit(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// str reads a string: its text shares the body's bytes when it has no
// escape and is valid UTF-8, else it is encoding/json's reading of it
// (the tree's: TestJSONParseFastIsJSONParse).
func (s *preScan) str() (string, bool) {
	raw, plain, ok := s.strRaw()
	if !ok {
		return "", false
	}
	if plain {
		if len(raw) == 2 {
			return "", true
		}
		return unsafe.String(&raw[1], len(raw)-2), true
	}
	var out string
	if json.Unmarshal(raw, &out) != nil {
		return "", false
	}
	return out, true
}

// strRaw reads a string, quotes included; plain: without an escape, valid
// UTF-8. A control character in it is not JSON. A string of printable
// ASCII without a backslash, the common one, is read by its closing quote
// (bytes.IndexByte) and one pass over its bytes.
func (s *preScan) strRaw() (raw []byte, plain, ok bool) {
	start := s.i
	if q := bytes.IndexByte(s.b[start+1:], '"'); q >= 0 && prePlainASCII(s.b[start+1:start+1+q]) {
		s.i = start + q + 2
		return s.b[start:s.i], true, true
	}
	ascii := true
	plain = true
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			raw = s.b[start:s.i]
			if !ascii && plain && !utf8.Valid(raw) {
				plain = false
			}
			return raw, plain, true
		case c == '\\':
			plain = false
			s.i++
			if s.i == len(s.b) {
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false, false
}

// prePlainASCII reports whether b holds no control character, no
// backslash and no byte past ASCII, eight bytes at a time: a word has a
// byte below 0x20 when (w-0x20..20)&^w&0x80..80 is not zero, a byte equal
// to the backslash when (x-0x01..01)&^x&0x80..80 is not zero for x =
// w^0x5c..5c, and a byte past ASCII when w&0x80..80 is not zero.
func prePlainASCII(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		x := w ^ (ones * '\\')
		if (w|(w-ones*0x20)&^w|(x-ones)&^x)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *preScan) number() (string, bool) {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return "", false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return "", false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return "", false
		}
	}
	return unsafe.String(&s.b[start], s.i-start), true
}

// digits reads one or more digits.
func (s *preScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// skip reads any value.
func (s *preScan) skip() bool { return s.value1(preAnything, 0) }

// preAnything is the node without keywords: the scan reads a value with
// it only to know it is JSON.
var preAnything = &preNode{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1}

// object reads an object and reports whether its keywords pass it:
// required, properties, patternProperties, additionalProperties,
// propertyNames.
func (s *preScan) object(n *preNode) bool {
	if s.depth++; s.depth > preScanMaxDepth {
		return false
	}
	s.i++ // {
	var seen uint64
	child := len(s.chain)
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			key, ok := s.str()
			if !ok {
				return false
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			for j, r := range n.required {
				if r == key {
					seen |= 1 << j
				}
			}
			if !s.member(n, key, child) {
				return false
			}
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			if s.b[s.i] == '}' {
				s.i++
				break
			}
			if s.b[s.i] != ',' {
				return false
			}
			s.i++
		}
	}
	s.depth--
	return seen == 1<<len(n.required)-1
}

// member reads the value of the member key and reports whether the
// schemas n applies to it pass it (properties, patternProperties,
// additionalProperties) and propertyNames passes its name.
func (s *preScan) member(n *preNode, key string, child int) bool {
	if n.propertyNames != nil && pcCheckName(n.propertyNames, key) != prePass {
		return false
	}
	start, end := s.i, -1
	evaluated := false
	if p, ok := n.props[key]; ok {
		evaluated = true
		if !s.value(p, child) {
			return false
		}
		end = s.i
	}
	for _, pp := range n.patternProps {
		if pp.re.MatchString(key) {
			evaluated = true
			s.i = start
			if !s.value(pp.node, child) {
				return false
			}
			end = s.i
		}
	}
	if !evaluated {
		if n.addlFalse {
			return false
		}
		if !s.value(n.addl, child) {
			return false
		}
		end = s.i
	}
	s.i = end
	return true
}

// pcCheckName is the precheck's verdict on a property name, which the
// validator checks as a document of its own.
func pcCheckName(n *preNode, name string) preVerdict {
	pc := precheckerPool.Get().(*prechecker)
	v := pc.check(n, name, 0)
	clear(pc.chain[:cap(pc.chain)])
	pc.chain = pc.chain[:0]
	precheckerPool.Put(pc)
	return v
}

// array reads an array and reports whether its keywords pass it:
// minItems, maxItems, prefixItems, items, additionalItems.
func (s *preScan) array(n *preNode) bool {
	if s.depth++; s.depth > preScanMaxDepth {
		return false
	}
	s.i++ // [
	base, count := len(s.chain), 0
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
	} else {
		for {
			if !s.value(s.itemNode(n, count), base) {
				return false
			}
			count++
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			if s.b[s.i] == ']' {
				s.i++
				break
			}
			if s.b[s.i] != ',' {
				return false
			}
			s.i++
		}
	}
	s.depth--
	if n.minItems >= 0 && count < n.minItems || n.maxItems >= 0 && count > n.maxItems {
		return false
	}
	return !(n.draft < 2020 && n.itemList != nil && n.addItemsFalse && count > len(n.itemList))
}

// itemNode is the schema the validator applies to item i of an array
// (nil: none).
func (s *preScan) itemNode(n *preNode, i int) *preNode {
	if i < len(n.itemList) {
		return n.itemList[i]
	}
	if n.items != nil && (n.draft >= 2020 || n.itemList == nil) {
		return n.items
	}
	if n.draft < 2020 && n.itemList != nil {
		return n.addItems
	}
	return nil
}
