package ui

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"time"

	"github.com/hamba/avro/v2"
)

// avroValue turns an edited body (JSON as the page shows an Avro body:
// unions unwrapped, bytes and fixed as strings of code points 0-255,
// decimals as numbers, timestamps and dates as RFC 3339) into what
// hamba/avro encodes with schema s. Its error names the field
// ("/customer/email: want a string").
func avroValue(s avro.Schema, v any, at string) (any, error) {
	if at == "" {
		at = "/"
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		return avroValue(s.Schema(), v, at)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object (record %s)", at, s.FullName())
		}
		out := make(map[string]any, len(s.Fields()))
		for _, f := range s.Fields() {
			x, present := m[f.Name()]
			if !present {
				if f.HasDefault() {
					continue
				}
				return nil, fmt.Errorf("%s: missing field %q (no default)", join(at, f.Name()), f.Name())
			}
			c, err := avroValue(f.Type(), x, join(at, f.Name()))
			if err != nil {
				return nil, err
			}
			out[f.Name()] = c
		}
		for k := range m {
			if s.Fields() != nil && !hasField(s, k) {
				return nil, fmt.Errorf("%s: record %s has no field %q", join(at, k), s.FullName(), k)
			}
		}
		return out, nil
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an array", at)
		}
		out := make([]any, len(a))
		for i, x := range a {
			c, err := avroValue(s.Items(), x, join(at, strconv.Itoa(i)))
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want an object (a map)", at)
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			c, err := avroValue(s.Values(), x, join(at, k))
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case *avro.UnionSchema:
		if v == nil {
			if s.Nullable() {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: null is not allowed here", at)
		}
		var firstErr error
		for _, t := range s.Types() {
			if t.Type() == avro.Null {
				continue
			}
			c, err := avroValue(t, v, at)
			if err == nil {
				return map[string]any{unionName(t): c}, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		return nil, firstErr
	case *avro.EnumSchema:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want one of the symbols of enum %s", at, s.FullName())
		}
		for _, sym := range s.Symbols() {
			if sym == str {
				return str, nil
			}
		}
		return nil, fmt.Errorf("%s: %q is not a symbol of enum %s (%v)", at, str, s.FullName(), s.Symbols())
	case *avro.FixedSchema:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string (fixed %s)", at, s.FullName())
		}
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok && l != nil {
			return decimal(v, at)
		}
		b, err := fromLatin1(str, at)
		if err != nil {
			return nil, err
		}
		if len(b) != s.Size() {
			return nil, fmt.Errorf("%s: %d bytes, fixed %s has %d", at, len(b), s.FullName(), s.Size())
		}
		return fixedArray(b), nil
	case *avro.PrimitiveSchema:
		return primitive(s, v, at)
	case *avro.NullSchema:
		if v != nil {
			return nil, fmt.Errorf("%s: want null", at)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%s: schema %s is not editable here", at, s.Type())
}

func hasField(s *avro.RecordSchema, name string) bool {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

func join(at, name string) string {
	if at == "/" {
		return "/" + name
	}
	return at + "/" + name
}

// unionName is the name hamba/avro gives a union's branch.
func unionName(t avro.Schema) string {
	if n, ok := t.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if l, ok := t.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return string(t.Type()) + "." + string(l.Logical().Type())
	}
	return string(t.Type())
}

func primitive(s *avro.PrimitiveSchema, v any, at string) (any, error) {
	if l := s.Logical(); l != nil {
		switch l.Type() {
		case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros, avro.Date:
			str, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s: want a time in RFC 3339 (%s)", at, l.Type())
			}
			layout := time.RFC3339Nano
			if l.Type() == avro.Date {
				if t, err := time.Parse(time.DateOnly, str); err == nil {
					return t, nil
				}
			}
			t, err := time.Parse(layout, str)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a time in RFC 3339 (%s)", at, str, l.Type())
			}
			return t, nil
		case avro.Decimal:
			return decimal(v, at)
		}
	}
	switch s.Type() {
	case avro.String:
		if str, ok := v.(string); ok {
			return str, nil
		}
		return nil, fmt.Errorf("%s: want a string", at)
	case avro.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("%s: want true or false", at)
	case avro.Int, avro.Long:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: want a whole number (%s)", at, s.Type())
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not a whole number (%s)", at, n, s.Type())
		}
		if s.Type() == avro.Int {
			if int64(int32(i)) != i {
				return nil, fmt.Errorf("%s: %d does not fit an Avro int", at, i)
			}
			return int(i), nil
		}
		return i, nil
	case avro.Float, avro.Double:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: want a number (%s)", at, s.Type())
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not a number", at, n)
		}
		if s.Type() == avro.Float {
			return float32(f), nil
		}
		return f, nil
	case avro.Bytes:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string (bytes, one character a byte)", at)
		}
		return fromLatin1(str, at)
	}
	return nil, fmt.Errorf("%s: type %s is not editable here", at, s.Type())
}

func decimal(v any, at string) (any, error) {
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case string:
		text = x
	default:
		return nil, fmt.Errorf("%s: want a decimal number", at)
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return nil, fmt.Errorf("%s: %q is not a decimal number", at, text)
	}
	return r, nil
}

func fromLatin1(s, at string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 255 {
			return nil, fmt.Errorf("%s: %q is not a byte (bytes are characters 0-255)", at, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// fixedArray is b as the [n]byte hamba/avro encodes a fixed from.
func fixedArray(b []byte) any {
	return newFixed(b)
}

// newFixed is b as a [len(b)]byte value.
func newFixed(b []byte) any {
	t := reflect.ArrayOf(len(b), reflect.TypeFor[byte]())
	v := reflect.New(t).Elem()
	reflect.Copy(v, reflect.ValueOf(b))
	return v.Interface()
}
