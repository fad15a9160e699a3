package pgstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The outbox keeps a message's headers in header_table (bytea) as AMQP
// encodes a field table on the wire, byte for byte as amqp091-go writes
// it (the table's entries, without its length prefix): each name a short
// string, each value its type octet and its bytes. Read back, every value
// is the Go type amqp091-go reads from the wire, which it writes again as
// the same bytes, so a relayed message carries exactly the headers Publish
// would have sent: binary strings and NULs, byte slices, nested tables and
// arrays, decimals, timestamps (whole seconds, as AMQP has them), every
// integer and float width (NaN and the infinities too), booleans and
// nil. jsonb, the column's type before issue 36, cannot hold a string that
// is not UTF-8 nor a NUL; rows written by an older version (headers jsonb,
// header_table NULL) are converted by Migrate, and read as before when one
// is met.

// maxTableDepth bounds the nesting decodeTable follows: amqp091-go reads
// no deeper.
const maxTableDepth = 32

var errTableSyntax = errors.New("not an AMQP field table")

// encodeTable is h as header_table stores it.
func encodeTable(h amqp.Table) ([]byte, error) {
	return appendTable(nil, h)
}

func appendTable(b []byte, t amqp.Table) ([]byte, error) {
	for k, v := range t {
		if len(k) > 255 {
			return nil, fmt.Errorf("header name %q…: %d bytes, above 255", k[:40], len(k))
		}
		b = append(b, byte(len(k)))
		b = append(b, k...)
		var err error
		if b, err = appendField(b, v); err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
	}
	return b, nil
}

// appendField appends v as amqp091-go's writeField writes it.
func appendField(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		if x {
			return append(b, 't', 1), nil
		}
		return append(b, 't', 0), nil
	case byte:
		return append(b, 'B', x), nil
	case int8:
		return append(b, 'b', byte(x)), nil
	case int16:
		return binary.BigEndian.AppendUint16(append(b, 's'), uint16(x)), nil
	case int:
		return binary.BigEndian.AppendUint32(append(b, 'I'), uint32(x)), nil
	case int32:
		return binary.BigEndian.AppendUint32(append(b, 'I'), uint32(x)), nil
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 'l'), uint64(x)), nil
	case uint16:
		return binary.BigEndian.AppendUint16(append(b, 'u'), x), nil
	case uint32:
		return binary.BigEndian.AppendUint32(append(b, 'i'), x), nil
	case float32:
		return binary.BigEndian.AppendUint32(append(b, 'f'), math.Float32bits(x)), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 'd'), math.Float64bits(x)), nil
	case amqp.Decimal:
		return binary.BigEndian.AppendUint32(append(b, 'D', x.Scale), uint32(x.Value)), nil
	case string:
		b = binary.BigEndian.AppendUint32(append(b, 'S'), uint32(len(x)))
		return append(b, x...), nil
	case []byte:
		b = binary.BigEndian.AppendUint32(append(b, 'x'), uint32(len(x)))
		return append(b, x...), nil
	case time.Time:
		return binary.BigEndian.AppendUint64(append(b, 'T'), uint64(x.Unix())), nil
	case nil:
		return append(b, 'V'), nil
	case []any:
		b = append(b, 'A', 0, 0, 0, 0)
		at := len(b)
		for i, e := range x {
			var err error
			if b, err = appendField(b, e); err != nil {
				return nil, fmt.Errorf("array element %d: %w", i, err)
			}
		}
		binary.BigEndian.PutUint32(b[at-4:at], uint32(len(b)-at))
		return b, nil
	case amqp.Table:
		b = append(b, 'F', 0, 0, 0, 0)
		at := len(b)
		var err error
		if b, err = appendTable(b, x); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(b[at-4:at], uint32(len(b)-at))
		return b, nil
	}
	return nil, fmt.Errorf("a value of type %T cannot be an AMQP header", v)
}

// decodeTable reads back what encodeTable wrote, each value as the Go type
// amqp091-go reads from the wire.
func decodeTable(b []byte) (amqp.Table, error) {
	t, err := readEntries(b, 0)
	if err != nil {
		return nil, fmt.Errorf("header_table: %w", err)
	}
	return t, nil
}

func readEntries(b []byte, depth int) (amqp.Table, error) {
	if depth > maxTableDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", errTableSyntax, maxTableDepth)
	}
	t := amqp.Table{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n {
			return nil, fmt.Errorf("%w: a name runs past the end", errTableSyntax)
		}
		k := string(b[1 : 1+n])
		v, rest, err := readValue(b[1+n:], depth)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		t[k], b = v, rest
	}
	return t, nil
}

func readValue(b []byte, depth int) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: a value's type is missing", errTableSyntax)
	}
	typ, b := b[0], b[1:]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("%w: a %q value runs past the end", errTableSyntax, typ)
		}
		return nil
	}
	sized := func() ([]byte, []byte, error) {
		if err := need(4); err != nil {
			return nil, nil, err
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(len(b)-4) < uint64(n) {
			return nil, nil, fmt.Errorf("%w: a %q value runs past the end", errTableSyntax, typ)
		}
		return b[4 : 4+n], b[4+n:], nil
	}
	fixed := map[byte]int{'t': 1, 'B': 1, 'b': 1, 's': 2, 'u': 2, 'I': 4, 'i': 4, 'f': 4, 'l': 8, 'd': 8, 'T': 8, 'D': 5}
	if n, ok := fixed[typ]; ok {
		if err := need(n); err != nil {
			return nil, nil, err
		}
		v, rest := b[:n], b[n:]
		switch typ {
		case 't':
			return v[0] != 0, rest, nil
		case 'B':
			return v[0], rest, nil
		case 'b':
			return int8(v[0]), rest, nil
		case 's':
			return int16(binary.BigEndian.Uint16(v)), rest, nil
		case 'u':
			return binary.BigEndian.Uint16(v), rest, nil
		case 'I':
			return int32(binary.BigEndian.Uint32(v)), rest, nil
		case 'i':
			return binary.BigEndian.Uint32(v), rest, nil
		case 'f':
			return math.Float32frombits(binary.BigEndian.Uint32(v)), rest, nil
		case 'l':
			return int64(binary.BigEndian.Uint64(v)), rest, nil
		case 'd':
			return math.Float64frombits(binary.BigEndian.Uint64(v)), rest, nil
		case 'T':
			return time.Unix(int64(binary.BigEndian.Uint64(v)), 0), rest, nil
		case 'D':
			return amqp.Decimal{Scale: v[0], Value: int32(binary.BigEndian.Uint32(v[1:]))}, rest, nil
		}
	}
	switch typ {
	case 'V':
		return nil, b, nil
	case 'S':
		v, rest, err := sized()
		return string(v), rest, err
	case 'x':
		v, rest, err := sized()
		if err != nil {
			return nil, nil, err
		}
		return append([]byte{}, v...), rest, nil
	case 'F':
		v, rest, err := sized()
		if err != nil {
			return nil, nil, err
		}
		t, err := readEntries(v, depth+1)
		return t, rest, err
	case 'A':
		v, rest, err := sized()
		if err != nil {
			return nil, nil, err
		}
		if depth+1 > maxTableDepth {
			return nil, nil, fmt.Errorf("%w: nested more than %d deep", errTableSyntax, maxTableDepth)
		}
		a := []any{}
		for len(v) > 0 {
			var e any
			if e, v, err = readValue(v, depth+1); err != nil {
				return nil, nil, err
			}
			a = append(a, e)
		}
		return a, rest, nil
	}
	return nil, nil, fmt.Errorf("%w: unknown field type %q", errTableSyntax, typ)
}
