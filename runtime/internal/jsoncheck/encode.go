package jsoncheck

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Encoder is a generated encoder of a typed value: it appends to b the
// bytes json.Marshal(v) would return, and returns false when it does not
// take v (another type, a nil pointer) or when json.Marshal would fail or
// might write something else (a float that is NaN or infinite, a
// time.Time out of RFC 3339's range): the codec then calls json.Marshal,
// so every error stays encoding/json's. acemq-gen emits one per JSON
// message type whose payload is a struct; a generated MarshalJSON would not
// do, as encoding/json re-scans what one returns.
type Encoder func(v any, b []byte) ([]byte, bool)

// encodeBuf is a pooled buffer an Encoder writes into; the body handed
// back is a copy of exactly its length, as json.Marshal's is.
type encodeBuf struct{ b []byte }

var encodePool = sync.Pool{New: func() any { return &encodeBuf{b: make([]byte, 0, 2048)} }}

// maxPooledEncode caps the buffers kept in the pool: one huge message
// does not pin its buffer.
const maxPooledEncode = 64 << 10

// Encode runs enc on v into a pooled buffer and returns a copy of what it
// wrote; false when enc did not take v.
func Encode(enc Encoder, v any) ([]byte, bool) {
	buf := encodePool.Get().(*encodeBuf)
	b, ok := enc(v, buf.b[:0])
	var out []byte
	if ok {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= maxPooledEncode {
		buf.b = b[:0]
		encodePool.Put(buf)
	}
	return out, ok
}

// AppendString appends s as a JSON string exactly as json.Marshal writes
// it: <, > and & as \u003c, \u003e and \u0026, U+2028 and U+2029 escaped,
// each byte that is not UTF-8 as \ufffd, \b \f \n \r \t and the other
// control characters escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// htmlSafe says which ASCII bytes json.Marshal writes as they are: the
// ones from space to DEL but ", \, <, > and &.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendFloat appends f as json.Marshal writes a float of bits (32 or
// 64) bits: the shortest decimal that reads back, in 'f' form, in 'e'
// form below 1e-6 and from 1e21 on (e-07, not e-07's zero: e-7). False for
// NaN and the infinities, which json.Marshal refuses.
func AppendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// AppendTime appends t as json.Marshal writes a time.Time (its
// MarshalJSON: RFC 3339 with nanoseconds, quoted); false when MarshalJSON
// would fail (a year outside 0–9999, an offset it cannot write).
func AppendTime(b []byte, t time.Time) ([]byte, bool) {
	n := len(b)
	out, err := t.AppendText(append(b, '"'))
	if err != nil {
		return b[:n], false
	}
	return append(out, '"'), true
}

// AppendValue appends json.Marshal(v): the generated encoders' way with a
// value they do not write out themselves (json.RawMessage, []byte, ...).
func AppendValue(b []byte, v any) ([]byte, bool) {
	out, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, out...), true
}

// MapKeys is m's keys sorted as json.Marshal sorts a map's members.
func MapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
