package pgstore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Rows written before header_table existed keep their headers in the
// headers column, a jsonb object that gives each value back with its AMQP
// type: a string is a JSON string, every other value an object with one
// member naming its type: {"int64": "7"}, {"bool": true}, {"float64": 1.5},
// {"time": "2026-01-02T03:04:05Z"}, {"bytes": "<base64>"},
// {"decimal": [scale, "value"]}, {"table": {...}}, {"array": [...]},
// {"null": true}; integers are written as strings so no digit is lost.
// decodeHeaders reads them (the relay, for a row Migrate has not
// converted; Migrate, to convert it).

// readHeaders is a row's headers: header_table when it has one, else the
// jsonb of an older row.
func readHeaders(table, legacy []byte) (amqp.Table, error) {
	if table != nil || legacy == nil {
		return decodeTable(table)
	}
	return decodeHeaders(legacy)
}

// decodeHeaders reads the jsonb headers of an older row.
func decodeHeaders(b []byte) (amqp.Table, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	h := make(amqp.Table, len(raw))
	for k, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		h[k] = v
	}
	return h, nil
}

func decodeValue(r json.RawMessage) (any, error) {
	if r = bytes.TrimSpace(r); len(r) > 0 && r[0] == '"' {
		var s string
		err := json.Unmarshal(r, &s)
		return s, err
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(r, &one); err != nil || len(one) != 1 {
		return nil, fmt.Errorf("not a string or a one-member typed value: %s", r)
	}
	for typ, val := range one {
		return decodeTyped(typ, val)
	}
	return nil, nil
}

func decodeTyped(typ string, val json.RawMessage) (any, error) {
	switch typ {
	case "null":
		return nil, nil
	case "bool":
		var b bool
		err := json.Unmarshal(val, &b)
		return b, err
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32":
		return decodeInt(typ, val)
	case "float32", "float64":
		var f float64
		if err := json.Unmarshal(val, &f); err != nil {
			return nil, err
		}
		if typ == "float32" {
			return float32(f), nil
		}
		return f, nil
	case "bytes":
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case "time":
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return nil, err
		}
		return time.Parse(time.RFC3339Nano, s)
	case "decimal":
		return decodeDecimal(val)
	case "table":
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(val, &raw); err != nil {
			return nil, err
		}
		t := make(amqp.Table, len(raw))
		for k, r := range raw {
			v, err := decodeValue(r)
			if err != nil {
				return nil, fmt.Errorf("table field %q: %w", k, err)
			}
			t[k] = v
		}
		return t, nil
	case "array":
		var raw []json.RawMessage
		if err := json.Unmarshal(val, &raw); err != nil {
			return nil, err
		}
		a := make([]any, len(raw))
		for i, r := range raw {
			v, err := decodeValue(r)
			if err != nil {
				return nil, fmt.Errorf("array element %d: %w", i, err)
			}
			a[i] = v
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown header type %q", typ)
}

func decodeInt(typ string, val json.RawMessage) (any, error) {
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return nil, err
	}
	if typ[0] == 'u' {
		bits, _ := strconv.Atoi(typ[4:])
		n, err := strconv.ParseUint(s, 10, bits)
		switch typ {
		case "uint8":
			return uint8(n), err
		case "uint16":
			return uint16(n), err
		}
		return uint32(n), err
	}
	bits, _ := strconv.Atoi(typ[3:])
	n, err := strconv.ParseInt(s, 10, bits)
	switch typ {
	case "int8":
		return int8(n), err
	case "int16":
		return int16(n), err
	case "int32":
		return int32(n), err
	}
	return n, err
}

func decodeDecimal(val json.RawMessage) (any, error) {
	var pair []json.RawMessage
	if err := json.Unmarshal(val, &pair); err != nil || len(pair) != 2 {
		return nil, fmt.Errorf("decimal: want [scale, \"value\"], have %s", val)
	}
	var scale uint8
	var s string
	if err := json.Unmarshal(pair[0], &scale); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(pair[1], &s); err != nil {
		return nil, err
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return amqp.Decimal{Scale: scale, Value: int32(n)}, err
}
