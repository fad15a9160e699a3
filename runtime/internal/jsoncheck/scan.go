package jsoncheck

import (
	"strconv"
	"strings"
)

// Shape is what a decode check needs to know of a JSON value beside
// the typed struct encoding/json fills: which members an object must
// have, which it may not, where null is allowed, which strings must be
// date-times (a time.Time field keeps no text to check) and the bounds of
// a float64 (whose text decides a value the float64 rounds onto a bound). acemq-gen writes
// one per checked message type; the runtime scans the body
// with it after json.Unmarshal succeeded, so a missing required property,
// an unknown member of a closed object, a null where a value must be, or
// a key only encoding/json's case-insensitive matching took are seen even
// though the struct cannot show them.
type Shape struct {
	Kind ShapeKind
	Null bool // null is valid here
	// NullUndecided: null is valid here but unmarshals to a zero struct
	// the check cannot tell from an object: the reference decides.
	NullUndecided bool
	// NullBranch: the schema is anyOf/oneOf of a schema and null; a
	// violation inside the value is also one at the value itself.
	NullBranch bool
	Fields     []Member          // Object: the properties
	Closed     bool              // Object: additionalProperties false
	Elem       *Shape            // Array: each item; Map: each member
	Format     func(string) bool // String: the string's format, checked on the text
	// Number: the bounds of a float64, each the text of a number (""
	// when absent), checked on the number's text: a float64 equal to a
	// bound cannot tell the reference's verdict (-1e-400 unmarshals to
	// 0, which minimum 0 admits and the number itself does not).
	Minimum, Maximum, ExclusiveMinimum, ExclusiveMaximum string
}

// Member is one property of an Object shape.
type Member struct {
	Name     string
	Required bool
	Shape    *Shape
}

// ShapeKind is what a Shape describes.
type ShapeKind int

const (
	Any    ShapeKind = iota // any value (a scalar, or json.RawMessage)
	Object                  // a struct
	Array                   // a slice
	Map                     // a map
	String                  // a string with a Format to check on its text
	Number                  // a float64 with bounds to check on its text
)

// Scan marks c as checking a decoded value and scans body (which
// json.Unmarshal accepted) as shape says, reporting to c what the struct
// cannot show.
func Scan(c *Check, body []byte, shape *Shape) {
	c.decoding = true
	s := scan{b: body, c: c, path: c.scanPath[:0]}
	s.value(shape)
	c.scanPath = s.path[:0]
}

// scan walks a body json.Unmarshal accepted (so well formed) as shape
// says, reporting to c what the struct cannot show. It gives up (c
// undecided) on what it does not follow: a key written with escapes, a
// key encoding/json may have matched to a field case-insensitively.
type scan struct {
	b    []byte
	i    int
	c    *Check
	path []scanTok // where the scan is; a location is built only for a violation
}

// scanTok is one step of a scan's path: a member (its key in the body) or
// an element.
type scanTok struct {
	key   []byte
	index int
	item  bool
}

func (s *scan) push(t scanTok) { s.path = append(s.path, t) }
func (s *scan) pop()           { s.path = s.path[:len(s.path)-1] }

// fail records a violation at the scan's path, plus key when not nil.
func (s *scan) fail(key []byte, msg string) {
	tokens := make([]string, 0, len(s.path)+1)
	for _, t := range s.path {
		if t.item {
			tokens = append(tokens, strconv.Itoa(t.index))
		} else {
			tokens = append(tokens, string(t.key))
		}
	}
	if key != nil {
		tokens = append(tokens, string(key))
	}
	s.c.violations = append(s.c.violations, Violation{Location: Pointer(tokens), Message: msg})
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value under shape.
func (s *scan) value(sh *Shape) {
	if sh.NullBranch {
		n := len(s.c.violations)
		s.value1(sh)
		if len(s.c.violations) > n {
			s.fail(nil, "neither the schema nor null (anyOf/oneOf)")
		}
		return
	}
	s.value1(sh)
}

func (s *scan) value1(sh *Shape) {
	s.ws()
	if s.i >= len(s.b) {
		s.c.Undecided()
		return
	}
	if s.b[s.i] == 'n' {
		s.i += 4
		switch {
		case sh.NullUndecided:
			s.c.Undecided()
		case !sh.Null:
			s.fail(nil, "got null")
		}
		return
	}
	switch {
	case sh.Kind == Object && s.b[s.i] == '{':
		s.object(sh)
	case sh.Kind == Array && s.b[s.i] == '[':
		s.array(sh.Elem)
	case sh.Kind == Map && s.b[s.i] == '{':
		s.i++
		for {
			key, ok := s.next()
			if !ok {
				return
			}
			s.push(scanTok{key: key})
			s.value(sh.Elem)
			s.pop()
		}
	case sh.Kind == Number:
		start := s.i
		s.skip()
		s.number(sh, s.b[start:s.i])
	case sh.Kind == String && s.b[s.i] == '"':
		start := s.i
		s.skip()
		str := s.b[start+1 : s.i-1]
		if strings.IndexByte(string(str), '\\') >= 0 {
			s.c.Undecided()
		} else if sh.Format != nil && !sh.Format(string(str)) {
			s.fail(nil, "bad format")
		}
	default:
		s.skip()
	}
}

// object scans a struct's members: the required ones must be there, an
// unknown one must be allowed.
func (s *scan) object(sh *Shape) {
	var seenSmall [64]bool
	var seen []bool
	if len(sh.Fields) <= len(seenSmall) {
		seen = seenSmall[:len(sh.Fields)]
	} else {
		seen = make([]bool, len(sh.Fields))
	}
	s.i++ // {
	for {
		key, ok := s.next()
		if !ok {
			break
		}
		s.member(sh, seen, key)
	}
	for i := range sh.Fields {
		if sh.Fields[i].Required && !seen[i] {
			s.fail([]byte(sh.Fields[i].Name), "missing property")
		}
	}
}

// member scans the value of member key of a struct.
func (s *scan) member(sh *Shape, seen []bool, key []byte) {
	for i := range sh.Fields {
		if sh.Fields[i].Name == string(key) {
			seen[i] = true
			s.push(scanTok{key: key})
			s.value(sh.Fields[i].Shape)
			s.pop()
			return
		}
	}
	if sh.Closed {
		s.fail(key, "property not allowed")
	}
	for i := range sh.Fields {
		if strings.EqualFold(sh.Fields[i].Name, string(key)) {
			s.c.Undecided() // encoding/json may have put it in the field
			s.c.keyed = true
		}
	}
	s.skip()
}

// next moves to the next member of the object being read (after its
// "{"), returns its key and leaves s.i at its value; ok is false at the
// object's end, or when the scan gave up.
func (s *scan) next() (key []byte, ok bool) {
	for {
		s.ws()
		if s.i >= len(s.b) || s.c.undecided {
			s.c.Undecided()
			return nil, false
		}
		switch s.b[s.i] {
		case '}':
			s.i++
			return nil, false
		case ',':
			s.i++
			continue
		case '"':
		default:
			s.c.Undecided()
			return nil, false
		}
		start := s.i + 1
		j := start
		for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' {
			j++
		}
		if j >= len(s.b) || s.b[j] == '\\' {
			s.c.Undecided() // an escaped key: the reference decides
			s.c.keyed = j < len(s.b)
			return nil, false
		}
		key = s.b[start:j]
		s.i = j + 1
		s.ws()
		s.i++ // :
		return key, true
	}
}

func (s *scan) array(elem *Shape) {
	s.i++ // [
	for n := 0; ; {
		s.ws()
		if s.i >= len(s.b) {
			s.c.Undecided()
			return
		}
		switch s.b[s.i] {
		case ']':
			s.i++
			return
		case ',':
			s.i++
			continue
		}
		s.push(scanTok{index: n, item: true})
		s.value(elem)
		s.pop()
		n++
		if s.c.undecided {
			return
		}
	}
}

// skip moves past one value.
func (s *scan) skip() {
	s.ws()
	if s.i >= len(s.b) {
		return
	}
	depth := 0
	for s.i < len(s.b) {
		ch := s.b[s.i]
		switch ch {
		case '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			s.i++
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return
			}
			if depth < 0 {
				return // the end of the enclosing container: not ours
			}
		case ',':
			if depth == 0 {
				return
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return
			}
		}
		s.i++
	}
}
