package jsoncheck

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// DecodeFunc is a generated one-pass decoder of a JSON body into a typed
// value: it returns true only when *v (a pointer to the type it decodes)
// is then exactly what json.Unmarshal makes of the body in a zero value,
// and the body has nothing the decode shape's Scan would report or leave
// undecided. In every other case it returns false with *v zeroed: the
// codec then decodes as it does without it (DecodeChecked, the reference),
// so every error stays the existing path's. acemq-gen emits one per JSON
// message type whose payload's structs it can decode this way; it calls
// the Decoder's methods, which bail (false) on whatever they do not read
// exactly as encoding/json does: a backslash or a byte that is not UTF-8
// in a string, a key that is not byte-equal to a field's name, an unknown
// or repeated key, null, a number the Go type's decode would refuse or
// read otherwise, nesting deeper than fastMaxDepth, data after the value.
type DecodeFunc func(d *Decoder, v any) bool

// Decoder is the strict lexer a generated decoder reads a body with, and
// the decode shape of the value it is at. Its methods return false when
// the body is not exactly what they read; the generated code then returns
// false.
type Decoder struct {
	b     []byte
	i     int
	depth int
	root  *Shape
	// s is b as a string, made by the first string value read: every
	// string the decoder stores is a substring of it (one allocation a
	// body, not one a string).
	s string
}

// ObjectState is what a generated decoder keeps of the object it reads:
// its shape, which of its struct's fields and of the shape's members were
// seen, the current key.
type ObjectState struct {
	sh      *Shape
	b       []byte // the body (set once an object: a key is two offsets into it, no pointer to write a member)
	n       int    // members read
	fields  uint64
	members uint64
	lo, hi  int // the current key: b[lo:hi]
}

var decoderPool = sync.Pool{New: func() any { return new(Decoder) }}

// Decode runs dec on body into v with shape (nil: no shape, only the
// value is decoded): true when dec took the body.
func Decode(dec DecodeFunc, shape *Shape, body []byte, v any) bool {
	d := decoderPool.Get().(*Decoder)
	*d = Decoder{b: body, root: shape}
	ok := dec(d, v)
	*d = Decoder{}
	decoderPool.Put(d)
	return ok
}

// DecodeFast is DecodeChecked by the generated decoder dec: decoded says
// dec took the body (v is json.Unmarshal's value, and the shape's scan
// would find nothing), passed that the generated check passes v too.
// When not decoded, v is zero and DecodeChecked decides.
func DecodeFast(dec DecodeFunc, check Checker, shape *Shape, body []byte, v any) (decoded, passed bool) {
	if dec == nil || !Decode(dec, shape, body, v) {
		return false, false
	}
	c := checkPool.Get().(*Check)
	c.decoding = true
	c.textValid = true
	ok := check(v, c) && c.Passed()
	c.reset()
	checkPool.Put(c)
	return true, ok
}

// Shape is the decode shape of the document (nil: none).
func (d *Decoder) Shape() *Shape { return d.root }

func (d *Decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *Decoder) peek() byte {
	d.ws()
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i]
}

// End says only whitespace follows the value read.
func (d *Decoder) End() bool {
	d.ws()
	return d.i == len(d.b) && d.depth == 0
}

// kindIs says sh (nil: no shape) lets a value of the Go kind want be read
// here without a check this decoder does not make: Any, or want.
func kindIs(sh *Shape, want ShapeKind) bool {
	return sh == nil || sh.Kind == Any || sh.Kind == want
}

// BeginObject reads the "{" of a struct's object under sh into o.
func (d *Decoder) BeginObject(sh *Shape, o *ObjectState) bool {
	if !kindIs(sh, Object) || d.peek() != '{' {
		return false
	}
	if sh != nil && sh.Kind == Any {
		sh = nil // nothing to check inside
	}
	if sh != nil && len(sh.Fields) > 64 {
		return false
	}
	if d.depth++; d.depth > fastMaxDepth {
		return false
	}
	d.i++
	*o = ObjectState{sh: sh, b: d.b}
	return true
}

// NextMember moves to the next member of o and reads its key (Key);
// false at the object's end or when the body is not what it reads (End
// tells).
func (d *Decoder) NextMember(o *ObjectState) bool {
	c := d.peek()
	if o.n > 0 {
		if c == '}' {
			return false
		}
		if c != ',' {
			d.i = len(d.b) + 1 // not JSON: EndObject fails
			return false
		}
		d.i++
		c = d.peek()
	} else if c == '}' {
		return false
	}
	lo, hi, ok := d.rawKey()
	if !ok || d.peek() != ':' {
		d.i = len(d.b) + 1
		return false
	}
	d.i++
	o.lo, o.hi = lo, hi
	o.n++
	return true
}

// Key is the key of the member NextMember moved to: the bytes up to
// the first quote, not checked for escapes, control characters or UTF-8.
// A caller takes a key only when it is byte-equal to one of its names, a
// plain text (acemq-gen's decodeNames takes no name whose JSON form has a
// backslash, which is how encoding/json writes a control character, a
// quote or a byte that is not UTF-8), and bails on any other: a key equal
// to a plain name ends at that quote and is that name.
func (o *ObjectState) Key() []byte { return o.b[o.lo:o.hi] }

// Field marks field i of the struct (the one whose name is the current
// key) seen and returns the shape of its value: false when the key was
// seen before, or the shape has something to say about it this decoder
// does not check (a member not allowed, a member encoding/json would
// match case-insensitively).
func (d *Decoder) Field(o *ObjectState, i int) (*Shape, bool) {
	if i >= 64 || o.fields&(1<<i) != 0 {
		return nil, false
	}
	o.fields |= 1 << i
	if o.sh == nil {
		return nil, true
	}
	fs := o.sh.Fields
	j := -1
	if i < len(fs) && fs[i].Name == string(o.Key()) {
		j = i
	} else {
		for k := range fs {
			if fs[k].Name == string(o.Key()) {
				j = k
				break
			}
		}
	}
	if j < 0 {
		if o.sh.Closed {
			return nil, false
		}
		for k := range fs {
			if strings.EqualFold(fs[k].Name, string(o.Key())) {
				return nil, false
			}
		}
		return nil, true
	}
	o.members |= 1 << j
	return fs[j].Shape, true
}

// EndObject reads the "}" of o: false when the body is not JSON there or
// a member the shape requires was missing.
func (d *Decoder) EndObject(o *ObjectState) bool {
	if d.i >= len(d.b) || d.b[d.i] != '}' {
		return false
	}
	d.i++
	d.depth--
	if o.sh == nil {
		return true
	}
	for j := range o.sh.Fields {
		if o.sh.Fields[j].Required && o.members&(1<<j) == 0 {
			return false
		}
	}
	return true
}

// ArrayState is what a generated decoder keeps of the array it reads.
type ArrayState struct {
	n int
}

// BeginArray reads the "[" of a slice under sh and returns the shape of
// its elements.
func (d *Decoder) BeginArray(sh *Shape, a *ArrayState) (*Shape, bool) {
	if !kindIs(sh, Array) || d.peek() != '[' {
		return nil, false
	}
	if d.depth++; d.depth > fastMaxDepth {
		return nil, false
	}
	d.i++
	*a = ArrayState{}
	if sh != nil && sh.Kind == Array {
		return sh.Elem, true
	}
	return nil, true
}

// NextElem moves to the next element of a; false at the array's end or
// when the body is not JSON there (EndArray tells).
func (d *Decoder) NextElem(a *ArrayState) bool {
	c := d.peek()
	if c == ']' {
		return false
	}
	if a.n > 0 {
		if c != ',' {
			d.i = len(d.b) + 1
			return false
		}
		d.i++
	}
	a.n++
	return true
}

// EndArray reads the "]" of a.
func (d *Decoder) EndArray(a *ArrayState) bool {
	if d.i >= len(d.b) || d.b[d.i] != ']' {
		return false
	}
	d.i++
	d.depth--
	return true
}

// rawKey reads a member's key up to its first quote and returns where its
// bytes are, unchecked (see Key). Keys are short: a loop finds the quote
// for less than bytes.IndexByte's call.
func (d *Decoder) rawKey() (lo, hi int, ok bool) {
	b := d.b
	if d.i >= len(b) || b[d.i] != '"' {
		return 0, 0, false
	}
	lo = d.i + 1
	for j := lo; j < len(b); j++ {
		if b[j] == '"' {
			d.i = j + 1
			return lo, j, true
		}
	}
	return 0, 0, false
}

// plainString reads a string without escapes, of UTF-8 and no control
// characters, and returns its bytes (false for any other). The closing
// quote is found with bytes.IndexByte: with no backslash before it, it is
// the string's end; the bytes before it are then checked eight at a time.
func (d *Decoder) plainString() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	n := bytes.IndexByte(d.b[start:], '"')
	if n < 0 {
		return nil, false
	}
	s := d.b[start : start+n]
	if !plainText(s) {
		return nil, false
	}
	d.i = start + n + 1
	return s, true
}

// plainText says s has no backslash, no control character and is UTF-8.
func plainText(s []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	ascii := true
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		// A byte below 0x20, at or above 0x80, or a backslash (0x5c)
		// sets its high bit here (a borrow may set a few more, which
		// the byte loop clears up).
		x := w ^ (lo * '\\')
		if (w|(w-lo*0x20)|(x-lo)&^x)&hi == 0 {
			continue
		}
		for _, c := range s[i : i+8] {
			switch {
			case c == '\\' || c < ' ':
				return false
			case c >= utf8.RuneSelf:
				ascii = false
			}
		}
	}
	for _, c := range s[i:] {
		switch {
		case c == '\\' || c < ' ':
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return ascii || utf8.Valid(s)
}

// text reads a string under sh (nil, Any, or a String with a format the
// text must have) and returns where its bytes are in the body; a format
// checks it as a substring of the body's string.
func (d *Decoder) text(sh *Shape) (lo, hi int, ok bool) {
	if !kindIs(sh, String) || d.peek() != '"' {
		return 0, 0, false
	}
	lo = d.i + 1
	if _, ok := d.plainString(); !ok {
		return 0, 0, false
	}
	hi = d.i - 1
	if sh != nil && sh.Format != nil && !sh.Format(d.str(lo, hi)) {
		return 0, 0, false
	}
	return lo, hi, true
}

// str is the body's bytes [lo:hi] as a substring of the body's string.
func (d *Decoder) str(lo, hi int) string {
	if len(d.s) != len(d.b) {
		d.s = string(d.b)
	}
	return d.s[lo:hi]
}

// DecodeString reads a string (a string field, or a named string type's) into
// *p.
func DecodeString[T ~string](d *Decoder, p *T, sh *Shape) bool {
	lo, hi, ok := d.text(sh)
	if !ok {
		return false
	}
	*p = T(d.str(lo, hi))
	return true
}

// DecodeBool reads true or false into *p.
func DecodeBool[T ~bool](d *Decoder, p *T, sh *Shape) bool {
	if !kindIs(sh, Any) {
		return false
	}
	switch d.peek() {
	case 't':
		if !d.literal("true") {
			return false
		}
		*p = true
	case 'f':
		if !d.literal("false") {
			return false
		}
		*p = false
	default:
		return false
	}
	return true
}

func (d *Decoder) literal(lit string) bool {
	if !strings.HasPrefix(unsafe.String(unsafe.SliceData(d.b[d.i:]), len(d.b)-d.i), lit) {
		return false
	}
	d.i += len(lit)
	return d.delimited()
}

// delimited says the value just read is followed by what may follow a
// value (so 12x or truex are not taken).
func (d *Decoder) delimited() bool {
	if d.i >= len(d.b) {
		return true
	}
	switch d.b[d.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// number reads a JSON number under sh (nil, Any, or a Number whose
// bounds the text must keep) and returns its text; integral says it has
// neither fraction nor exponent.
func (d *Decoder) number(sh *Shape) (text []byte, integral, ok bool) {
	if !kindIs(sh, Number) {
		return nil, false, false
	}
	d.ws()
	start, i := d.i, d.i
	b := d.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return nil, false, false
	}
	integral = true
	if i < len(b) && b[i] == '.' {
		integral = false
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, false, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integral = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, false, false
		}
	}
	d.i = i
	if !d.delimited() {
		return nil, false, false
	}
	text = b[start:i]
	if sh != nil && sh.Kind == Number && !numberClean(sh, text) {
		return nil, false, false
	}
	return text, integral, true
}

// numberClean says text keeps sh's bounds, read exactly (the scan's
// number check finding nothing and sure).
func numberClean(sh *Shape, text []byte) bool {
	if sh.Minimum == "0" && sh.Maximum == "" && sh.ExclusiveMinimum == "" && sh.ExclusiveMaximum == "" && text[0] != '-' {
		return true // a number without a sign is at least 0
	}
	c := Check{}
	s := scan{c: &c}
	s.number(sh, text)
	return c.Passed()
}

// DecodeInt reads an integer into *p as encoding/json does (strconv.ParseInt
// of the text, which must fit T): false for a fraction or an exponent,
// which encoding/json refuses, and for one that does not fit.
func DecodeInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64](d *Decoder, p *T, sh *Shape) bool {
	text, integral, ok := d.number(sh)
	if !ok || !integral {
		return false
	}
	n, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(text), len(text)), 10, 64)
	if err != nil || int64(T(n)) != n {
		return false
	}
	*p = T(n)
	return true
}

// DecodeFloat reads a number into *p as encoding/json does: strconv.ParseFloat
// of the text with T's bits; false when it fails (out of range).
func DecodeFloat[T ~float32 | ~float64](d *Decoder, p *T, sh *Shape) bool {
	text, _, ok := d.number(sh)
	if !ok {
		return false
	}
	bits := 64
	if unsafe.Sizeof(*p) == 4 {
		bits = 32
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), bits)
	if err != nil {
		return false
	}
	*p = T(f)
	return true
}

// Time reads a string into *p as (*time.Time).UnmarshalJSON reads it,
// which encoding/json calls with the quoted text.
func (d *Decoder) Time(p *time.Time, sh *Shape) bool {
	d.ws()
	start := d.i
	if _, _, ok := d.text(sh); !ok {
		return false
	}
	return p.UnmarshalJSON(d.b[start:d.i]) == nil
}

// SliceBuf is where a generated decoder reads an array's elements, a
// local of its own: the first four in the SliceBuf (on the stack), the
// rest in a slice grown on the heap. Slice is then one allocation for up
// to eight elements, not one a doubling of the slice from one.
type SliceBuf[T any] struct {
	b [4]T
	n int
	h []T
}

// Next appends a zero element and returns it.
func (s *SliceBuf[T]) Next() *T {
	if s.h == nil {
		if s.n < len(s.b) {
			s.n++
			return &s.b[s.n-1]
		}
		s.h = make([]T, len(s.b), 2*len(s.b))
		copy(s.h, s.b[:])
	}
	var zero T
	s.h = append(s.h, zero)
	return &s.h[len(s.h)-1]
}

// Slice is the elements read, not nil (encoding/json reads [] as an empty
// slice).
func (s *SliceBuf[T]) Slice() []T {
	if s.h != nil {
		return s.h
	}
	return append([]T{}, s.b[:s.n]...)
}
