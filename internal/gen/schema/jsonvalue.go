package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// jkind is the kind of a JSON value.
type jkind int

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

// jvalue is a JSON value that keeps the order of object members, so that
// struct fields come out in schema order.
type jvalue struct {
	kind jkind
	b    bool
	num  json.Number
	str  string
	arr  []*jvalue
	keys []string
	obj  map[string]*jvalue
	// off is where the value starts in the text, or a little before it
	// (blanks, a ':' or a ',' may come first; see textPos).
	off int64
}

// get returns member k of an object, or nil.
func (v *jvalue) get(k string) *jvalue {
	if v == nil || v.kind != jObject {
		return nil
	}
	return v.obj[k]
}

// getStr returns member k when it is a string.
func (v *jvalue) getStr(k string) (string, bool) {
	m := v.get(k)
	if m == nil || m.kind != jString {
		return "", false
	}
	return m.str, true
}

// raw renders v back as compact JSON (members in their original order).
func (v *jvalue) raw() string {
	var b bytes.Buffer
	v.write(&b)
	return b.String()
}

func (v *jvalue) write(b *bytes.Buffer) {
	switch v.kind {
	case jNull:
		b.WriteString("null")
	case jBool:
		fmt.Fprint(b, v.b)
	case jNumber:
		b.WriteString(v.num.String())
	case jString:
		s, _ := json.Marshal(v.str)
		b.Write(s)
	case jArray:
		b.WriteByte('[')
		for i, e := range v.arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			s, _ := json.Marshal(k)
			b.Write(s)
			b.WriteByte(':')
			v.obj[k].write(b)
		}
		b.WriteByte('}')
	}
}

// parseJSON parses one JSON document, keeping member order. A duplicate
// member keeps its last value, as encoding/json does.
func parseJSON(data []byte) (*jvalue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

const maxDepth = 10000

func parseValue(dec *json.Decoder, depth int) (*jvalue, error) {
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	off := dec.InputOffset()
	v, err := parseToken(dec, depth)
	if v != nil {
		v.off = off
	}
	return v, err
}

func parseToken(dec *json.Decoder, depth int) (*jvalue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jvalue{kind: jNull}, nil
	case bool:
		return &jvalue{kind: jBool, b: t}, nil
	case json.Number:
		return &jvalue{kind: jNumber, num: t}, nil
	case string:
		return &jvalue{kind: jString, str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &jvalue{kind: jArray}
			for dec.More() {
				e, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
			_, err := dec.Token()
			return v, err
		case '{':
			v := &jvalue{kind: jObject, obj: map[string]*jvalue{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				e, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := v.obj[k]; !dup {
					v.keys = append(v.keys, k)
				}
				v.obj[k] = e
			}
			_, err := dec.Token()
			return v, err
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
