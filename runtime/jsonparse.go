package runtime

import (
	"encoding/json"
	"unicode/utf8"
)

// jsonParseFast reads body into the tree jsonParse makes (map[string]any,
// []any, json.Number, string, bool, nil), without encoding/json's decoder:
// one pass over the bytes, the strings without escapes taken as they are,
// the numbers as their text. It says false for anything it is not sure to
// read exactly as encoding/json would: a body that is not JSON, a string
// with bytes that are not UTF-8 (encoding/json rewrites them) or nesting
// deeper than encoding/json allows; the caller then parses with jsonParse,
// which gives the same tree or the error text. A string with escapes is
// unquoted by encoding/json itself.
func jsonParseFast(body []byte) (any, bool) {
	p := jsonFastParser{b: body}
	p.space()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.b)
}

// jsonMaxDepth is encoding/json's nesting limit (its scanner's maxNestingDepth).
const jsonMaxDepth = 10000

type jsonFastParser struct {
	b []byte
	i int
}

func (p *jsonFastParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonFastParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *jsonFastParser) literal(lit string) bool {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		return false
	}
	p.i += len(lit)
	return true
}

func (p *jsonFastParser) object(depth int) (any, bool) {
	if depth > jsonMaxDepth {
		return nil, false
	}
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		m[k.(string)] = v // a repeated member: the last wins, as in encoding/json
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *jsonFastParser) array(depth int) (any, bool) {
	if depth > jsonMaxDepth {
		return nil, false
	}
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

func (p *jsonFastParser) string() (any, bool) {
	start := p.i
	p.i++ // "
	escaped, ascii := false, true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			lit := p.b[start:p.i]
			if escaped {
				var s string
				if json.Unmarshal(lit, &s) != nil {
					return nil, false
				}
				return s, true
			}
			raw := lit[1 : len(lit)-1]
			if !ascii && !utf8.Valid(raw) {
				return nil, false
			}
			return string(raw), true
		case c == '\\':
			escaped = true
			p.i += 2 // the escape's second byte is checked by the unquoting
		case c < 0x20:
			return nil, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			p.i++
		}
	}
	return nil, false
}

func (p *jsonFastParser) number() (any, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// digits skips one or more decimal digits; false when there is none.
func (p *jsonFastParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
