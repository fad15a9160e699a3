// Package decodetest proves acemq-gen's one-pass JSON decoders equal to
// the path they stand in for: whenever a generated decoder takes a body,
// the value is json.Unmarshal's (in a zero value, reflect.DeepEqual) and
// the verdict of the generated check after it is DecodeChecked's (the
// decode shape's scan, then the check); and the codec decodes the body to
// the same value and error as the reference codec does. The bodies are
// valid ones and mutations of them that reach encoding/json's corners (a
// key in another case, escapes, null, a key twice, an unknown key, big
// and odd numbers, bad dates, truncation, trailing data). The generator's
// differential test copies this file into its scratch module (as package
// diffall), so it imports nothing of acemq-go but the runtime.
package decodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
)

// DecodeIsUnmarshal compares mt's generated decoder with json.Unmarshal
// and the decode check on body; it reports whether the decoder took body
// (has is false when mt has no decoder).
func DecodeIsUnmarshal[T any](t testing.TB, mt *runtime.MessageType[T], body []byte) (took, has bool) {
	t.Helper()
	got, took, passed, has := impltest.GeneratedDecode(mt, body)
	if !has {
		return false, false
	}
	var zero T
	if !took {
		if !reflect.DeepEqual(got, zero) {
			t.Errorf("%s: %s: the decoder did not take the body and left %+v, not the zero value", mt.Name(), body, got)
		}
		return false, true
	}
	var want T
	if err := json.Unmarshal(body, &want); err != nil {
		t.Errorf("%s: %s: the decoder took a body json.Unmarshal refuses: %v", mt.Name(), body, err)
		return true, true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s: the decoder made\n%#v\njson.Unmarshal\n%#v", mt.Name(), body, got, want)
	}
	if c, ok := impltest.GeneratedDecodeCheck(mt, body); ok {
		if c.Passed() != passed {
			t.Errorf("%s: %s: after the decoder the check says passed=%v, the decode check (scan and check) %v (%v, undecided %v)",
				mt.Name(), body, passed, c.Passed(), c.Err(), c.IsUndecided())
		}
		if !passed && c.Count() == 0 && !c.IsUndecided() {
			t.Errorf("%s: %s: the check failed after the decoder, the decode check found nothing", mt.Name(), body)
		}
	}
	return true, true
}

// CodecIsReference decodes body with mt's codec and with ref, the
// reference codec (runtime.NewJSONCodec of mt's schema: the validator,
// json.Unmarshal): the same value, the same error text or none.
func CodecIsReference[T any](t testing.TB, mt *runtime.MessageType[T], ref runtime.Codec, body []byte) {
	t.Helper()
	c, err := mt.Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got, want T
	gotErr := c.Decode(context.Background(), body, &got)
	wantErr := ref.Decode(context.Background(), body, &want)
	switch {
	case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
		t.Errorf("%s: %s: the codec says %v, the reference %v", mt.Name(), body, gotErr, wantErr)
	case gotErr == nil && !reflect.DeepEqual(got, want):
		t.Errorf("%s: %s: the codec decoded\n%#v\nthe reference\n%#v", mt.Name(), body, got, want)
	}
}

// Mutations are bodies made from body (a JSON object): each one change a
// decoder must read as encoding/json does or leave to it.
func Mutations(body []byte, r *rand.Rand) [][]byte {
	var out [][]byte
	add := func(b []byte) { out = append(out, b) }
	s := string(body)
	// Keys: another case, an escape, twice, unknown, dropped.
	keys := keysOf(body)
	for _, k := range keys {
		q := `"` + k + `":`
		add([]byte(strings.Replace(s, q, `"`+strings.ToUpper(k)+`":`, 1)))
		add([]byte(strings.Replace(s, q, `"`+strings.ToUpper(k[:1])+k[1:]+`":`, 1)))
		add([]byte(strings.Replace(s, q, `"\u00`+hex2(k[0])+k[1:]+`":`, 1)))
		add([]byte(strings.Replace(s, q, `"`+k+`":null,`+q, 1)))
		add([]byte(strings.Replace(s, q, q+"null,"+q, 1)))
		add([]byte(dropMember(s, k)))
		// The decoder matches a key by its bytes up to the first quote:
		// a backslash, a control character or a byte that is not UTF-8
		// next to a name's bytes, or an escaped quote after them.
		add([]byte(strings.Replace(s, q, `"`+k+`\":`, 1)))
		add([]byte(strings.Replace(s, q, `"`+k+`\"x":`, 1)))
		add([]byte(strings.Replace(s, q, `"`+k+"\x01\":", 1)))
		add([]byte(strings.Replace(s, q, `"`+k+"\xff\":", 1)))
		add([]byte(strings.Replace(s, q, `"\t`+k+`":`, 1)))
	}
	if len(s) > 2 && s[0] == '{' {
		add([]byte(`{"zz_unknown":1,` + s[1:]))
		add([]byte(`{"zz":null,` + s[1:]))
		add([]byte(`{ ` + s[1:len(s)-1] + "\n}\t"))
	}
	// Values: swap each scalar for a corner.
	corners := []string{`null`, `0`, `-0`, `1e3`, `1.0`, `1E+2`, `-1`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775809`, `2147483648`, `1e400`, `-1e400`, `1e-400`, `-1e-400`, `0.1`, `123456789012345678901234567890`,
		`"x"`, `""`, `"\u0041"`, `"a\"b"`, `"\ud800"`, `"\xff"`, `"é"`, `"2026-11-30T06:00:00Z"`, `"2026-11-30T06:00:00.123+01:00"`,
		`"2026-13-30T06:00:00Z"`, `"2026-11-30 06:00:00Z"`, `"2026-11-30T06:00:00z"`, `"2026-11-30T24:00:00Z"`, `"2026-11-30T06:00:60Z"`,
		`"2026-02-29T00:00:00Z"`, `true`, `false`, `[]`, `{}`, `[1]`, `tru`, `01`, `1.`, `.5`, `-`, `+1`, `"placed"`, `"PLACED"`, `"paid"`}
	spans := scalarSpans(body)
	for range 3 * len(spans) {
		if len(spans) == 0 {
			break
		}
		sp := spans[r.IntN(len(spans))]
		add([]byte(s[:sp[0]] + corners[r.IntN(len(corners))] + s[sp[1]:]))
	}
	// Truncation, trailing data, a byte changed.
	for _, n := range []int{0, 1, len(s) / 2, len(s) - 1} {
		if n <= len(s) {
			add([]byte(s[:n]))
		}
	}
	add([]byte(s + " "))
	add([]byte(s + "x"))
	add([]byte(s + "{}"))
	add([]byte("\ufeff" + s))
	for range 8 {
		b := []byte(s)
		if len(b) > 0 {
			const repl = "{}[],:\"\\ 0a-\x00\xff"
			b[r.IntN(len(b))] = repl[r.IntN(len(repl))]
		}
		add(b)
	}
	return out
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// keysOf are the keys of the members of body's objects, at any depth.
func keysOf(body []byte) []string {
	seen := map[string]bool{}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []bool // in an object, expecting a key
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, true)
			case '[':
				stack = append(stack, false)
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if len(stack) > 0 && stack[len(stack)-1] && dec.More() {
				// A key is followed by its value; tell keys from
				// string values by what encoding/json's decoder
				// expects: after a key comes ':'.
				if !seen[v] && v != "" && isKeyAt(body, dec.InputOffset()) {
					seen[v] = true
					keys = append(keys, v)
				}
			}
		}
	}
	return keys
}

// isKeyAt says a ':' follows offset off of body (after whitespace).
func isKeyAt(body []byte, off int64) bool {
	for i := int(off); i < len(body); i++ {
		switch body[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// dropMember removes the first member keyed k from s (a body
// json.Marshal wrote: no whitespace), or returns s.
func dropMember(s, k string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	if _, ok := m[k]; !ok {
		return s
	}
	delete(m, k)
	b, _ := json.Marshal(m)
	return string(b)
}

// scalarSpans are the [start, end) offsets of body's scalar values (not
// its keys).
func scalarSpans(body []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if body[j] == '\\' {
					j++
				}
				j++
			}
			if !isKeyAt(body, int64(j+1)) {
				out = append(out, [2]int{i, min(j+1, len(body))})
			}
			i = j
		case c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n':
			j := i
			for j < len(body) && !strings.ContainsRune(",}] \n\t\r", rune(body[j])) {
				j++
			}
			out = append(out, [2]int{i, j})
			i = j - 1
		}
	}
	return out
}

// Differential compares mt's decoder (DecodeIsUnmarshal) and codec
// (CodecIsReference) on each valid body and n rounds of its mutations; it
// returns how many valid bodies the decoder took, and how many mutations.
func Differential[T any](t testing.TB, mt *runtime.MessageType[T], valid [][]byte, seed uint64) (tookValid, tookMutated, mutated int) {
	t.Helper()
	ref := Reference(t, mt)
	r := rand.New(rand.NewPCG(seed, 23))
	for _, body := range valid {
		if took, has := DecodeIsUnmarshal(t, mt, body); !has {
			t.Fatalf("%s has no generated decoder", mt.Name())
		} else if took {
			tookValid++
		}
		CodecIsReference(t, mt, ref, body)
		for _, m := range Mutations(body, r) {
			mutated++
			if took, _ := DecodeIsUnmarshal(t, mt, m); took {
				tookMutated++
			}
			CodecIsReference(t, mt, ref, m)
		}
	}
	return tookValid, tookMutated, mutated
}

// DecodeFuzz is the body of a fuzz target comparing mt's decoder with
// json.Unmarshal and the decode check on the fuzzer's bodies, seeded with
// valid and their mutations.
func DecodeFuzz[T any](f *testing.F, mt *runtime.MessageType[T], valid [][]byte) {
	ref := Reference(f, mt)
	r := rand.New(rand.NewPCG(5, 23))
	for _, body := range valid {
		f.Add(body)
		for _, m := range Mutations(body, r) {
			f.Add(m)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, has := DecodeIsUnmarshal(t, mt, body); !has {
			t.Fatalf("%s has no generated decoder", mt.Name())
		}
		CodecIsReference(t, mt, ref, body)
	})
}

// Reference is the reference codec of mt: runtime.NewJSONCodec of its
// schema, without the generated check and decoder.
func Reference[T any](t testing.TB, mt *runtime.MessageType[T]) runtime.Codec {
	t.Helper()
	ref, err := runtime.NewJSONCodec(mt.Schema())
	if err != nil {
		t.Fatal(err)
	}
	return ref
}
