// Package encodetest proves acemq-gen's JSON encoders byte-equal to
// json.Marshal: it fills a payload type with values drawn from a byte
// source (random, or a fuzzer's input) that reach encoding/json's corners
// (HTML characters, U+2028 and U+2029, bytes that are not UTF-8, control
// characters, -0, floats at the 'e' cut-offs, NaN, times out of RFC 3339's
// range, nil against empty slices and maps, raw JSON that is not JSON) and
// compares the generated encoder's bytes with json.Marshal's. The
// generator's differential test copies this file into its scratch module
// (as package diffall), so it imports nothing of acemq-go but the runtime.
package encodetest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
)

// EncodeSource is where Fill draws its choices from: a fuzzer's bytes,
// then zeros once they run out.
type EncodeSource struct {
	data []byte
	off  int
}

// NewEncodeSource draws from data.
func NewEncodeSource(data []byte) *EncodeSource { return &EncodeSource{data: data} }

func (s *EncodeSource) byte() byte {
	if s.off >= len(s.data) {
		return 0
	}
	s.off++
	return s.data[s.off-1]
}

func (s *EncodeSource) uint64() uint64 {
	var u uint64
	for range 8 {
		u = u<<8 | uint64(s.byte())
	}
	return u
}

// stringPieces are what strings are made of.
var stringPieces = []string{
	"a", "Z", "0", " ", "-", "<", ">", "&", `"`, `\`, "/", "\x00", "\x1f", "\b", "\f", "\n", "\r", "\t", "\x7f",
	"é", "日", "\u2028", "\u2029", "\u2027", "\U0001F600", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\ufffd",
	"SKU-", "EUR", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", "ada@example.com", "2026-12-02T17:00:00Z",
}

var floatPieces = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 3.25, 61.5, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, 1.5e300,
	math.SmallestNonzeroFloat64, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 123456789.125}

var rawPieces = []string{"null", `{"a": [1, 2.5, "<x>"]}`, ` [ true , false ] `, `"\u2028"`, `12`, `{`, `"é"`, ""}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// Fill sets v (settable) to a value drawn from s; depth bounds recursion.
func Fill(s *EncodeSource, v reflect.Value, depth int) {
	switch {
	case v.Type() == timeType:
		sec := int64(s.uint64()>>24) - 1<<39
		if s.byte()%4 != 0 {
			sec = int64(s.uint64()%(300*365*86400)) + 1e9
		}
		off := int(int8(s.byte())) * 900
		if s.byte()%8 == 0 {
			off += int(s.byte()) // seconds in the offset
		}
		v.Set(reflect.ValueOf(time.Unix(sec, int64(s.uint64()%1e9)).In(time.FixedZone("z", off))))
		return
	case v.Type() == rawType:
		if p := rawPieces[int(s.byte())%len(rawPieces)]; p != "" {
			v.SetBytes([]byte(p))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		var b []byte
		for n := int(s.byte() % 12); n > 0; n-- {
			b = append(b, stringPieces[int(s.byte())%len(stringPieces)]...)
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(s.byte()&1 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch s.byte() % 4 {
		case 0:
			v.SetInt(int64(int8(s.byte())))
		case 1:
			v.SetInt(math.MinInt64)
		default:
			v.SetInt(int64(s.uint64()))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(s.uint64())
	case reflect.Float32, reflect.Float64:
		switch s.byte() % 3 {
		case 0:
			v.SetFloat(floatPieces[int(s.byte())%len(floatPieces)])
		case 1:
			v.SetFloat(float64(int16(s.uint64())) * math.Pow(10, float64(int(s.byte()%50)-25)))
		default:
			v.SetFloat(math.Float64frombits(s.uint64()))
		}
	case reflect.Pointer:
		if depth <= 0 || s.byte()%4 == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		Fill(s, p.Elem(), depth-1)
		v.Set(p)
	case reflect.Slice:
		switch k := s.byte() % 6; {
		case depth <= 0 || k == 0:
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := int(s.byte()%4) + 1
			sl := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				Fill(s, sl.Index(i), depth-1)
			}
			v.Set(sl)
		}
	case reflect.Array:
		for i := range v.Len() {
			Fill(s, v.Index(i), depth-1)
		}
	case reflect.Map:
		switch k := s.byte() % 5; {
		case depth <= 0 || k == 0:
		case k == 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for n := int(s.byte()%4) + 1; n > 0; n-- {
				key := reflect.New(v.Type().Key()).Elem()
				Fill(s, key, 0)
				val := reflect.New(v.Type().Elem()).Elem()
				Fill(s, val, depth-1)
				m.SetMapIndex(key, val)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(s, v.Field(i), depth)
			}
		}
	case reflect.Interface:
		if s.byte()%2 == 0 {
			v.Set(reflect.ValueOf(stringPieces[int(s.byte())%len(stringPieces)]))
		}
	}
}

// EncodeIsMarshal compares mt's generated encoder with json.Marshal on v:
// the same bytes, or both refusing v. It reports whether the encoder
// wrote v; hasEncoder is false when mt has none.
func EncodeIsMarshal[T any](t testing.TB, mt *runtime.MessageType[T], v T) (wrote, hasEncoder bool) {
	t.Helper()
	got, ok, has := impltest.GeneratedEncode(mt, v)
	if !has {
		return false, false
	}
	want, err := json.Marshal(v)
	switch {
	case err != nil && ok:
		t.Errorf("%s: the generated encoder wrote %s, json.Marshal fails: %v", mt.Name(), got, err)
	case err == nil && !ok:
		t.Errorf("%s: the generated encoder refused a value json.Marshal writes as %s", mt.Name(), want)
	case ok && !bytes.Equal(got, want):
		t.Errorf("%s: the generated encoder wrote\n%s\njson.Marshal\n%s", mt.Name(), got, want)
	}
	return ok, true
}

// RandomEncodes compares mt's encoder with json.Marshal on n values filled
// from a seeded random source (the same values each run), and on the zero
// value; it returns how many the encoder wrote (json.Marshal refusing the
// rest), or -1 when mt has no encoder.
func RandomEncodes[T any](t testing.TB, mt *runtime.MessageType[T], n int, seed uint64) int {
	t.Helper()
	var zero T
	if _, has := EncodeIsMarshal(t, mt, zero); !has {
		return -1
	}
	r := rand.New(rand.NewPCG(seed, 21))
	data := make([]byte, 4096)
	wrote := 0
	for range n {
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		var v T
		Fill(NewEncodeSource(data), reflect.ValueOf(&v).Elem(), 4)
		if ok, _ := EncodeIsMarshal(t, mt, v); ok {
			wrote++
		}
	}
	return wrote
}

// EncodeFuzz is the body of a fuzz target comparing mt's encoder with json.Marshal on
// values filled from the fuzzer's bytes.
func EncodeFuzz[T any](f *testing.F, mt *runtime.MessageType[T]) {
	f.Add([]byte{})
	f.Add([]byte("\x05\x07\x01<&>\xff\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c"))
	r := rand.New(rand.NewPCG(7, 21))
	for range 8 {
		seed := make([]byte, 256)
		for i := range seed {
			seed[i] = byte(r.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v T
		Fill(NewEncodeSource(data), reflect.ValueOf(&v).Elem(), 4)
		if _, has := EncodeIsMarshal(t, mt, v); !has {
			t.Fatalf("%s has no generated encoder", mt.Name())
		}
	})
}
