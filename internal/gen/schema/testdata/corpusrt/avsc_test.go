package rtall

// This file is copied into the corpus module beside roundtrip_test.go. It
// checks the generated Go against a second Avro implementation, Node's
// avsc, through internal/crosscheck/check.js: bodies the generated Go
// encodes are decoded by avsc to equal values, and values avsc generates
// (Type.random()) are decoded by the generated Go and re-encoded to the
// same bytes. Each file's result is written as JSON to
// $ACEMQ_CROSSCHECK_OUT; corpus_test.go in internal/gen/schema judges them
// and writes docs/corpus.md.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// avscResult is what one corpus file gave.
type avscResult struct {
	File      string   `json:"file"`
	Error     string   `json:"error,omitempty"` // avsc could not run on the file at all
	GoToAvsc  int      `json:"go_to_avsc"`      // bodies the generated Go encoded that avsc decoded to an equal value
	AvscToGo  int      `json:"avsc_to_go"`      // avsc's random values the generated Go decoded and re-encoded to the same bytes
	Problems  []string `json:"problems,omitempty"`
	Attempted int      `json:"attempted"` // values tried in each direction
}

const avscValues = 8

// canon writes arrays and maps as avsc and the runtime do, with a count
// and no byte size before each block. hamba writes the byte size too by
// default; the Avro specification allows both, avsc reads both (the Go →
// avsc values are encoded with api, with sizes), and only the form without
// sizes can be compared byte for byte with avsc's encodings.
var canon = avro.Config{MaxByteSliceSize: 16 << 20, DisableBlockSizeHeader: true}.Freeze()

func avscCheck[T any](t *testing.T, file, text string) {
	t.Helper()
	dir, out := os.Getenv("ACEMQ_CROSSCHECK_DIR"), os.Getenv("ACEMQ_CROSSCHECK_OUT")
	if dir == "" || out == "" {
		t.Skip("ACEMQ_CROSSCHECK_DIR and ACEMQ_CROSSCHECK_OUT are not set (corpus_test.go sets them)")
	}
	res := avscResult{File: file, Attempted: avscValues}
	defer func() {
		data, _ := json.Marshal(res)
		name := strings.NewReplacer("/", "_").Replace(file) + ".json"
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			t.Error(err)
		}
	}()
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	// The generated Go encodes: random generic values, decoded into T and
	// encoded again from T.
	var encoded, canonical []string
	var want []any
	for seed := int64(100); seed < 100+avscValues; seed++ {
		g := randomValue(s, rand.New(rand.NewSource(seed)), 0)
		data, err := api.Marshal(s, g)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var v T
		if err := api.Unmarshal(s, data, &v); err != nil {
			t.Fatalf("seed %d: decoding into %T: %v", seed, v, err)
		}
		body, err := api.Marshal(s, v)
		if err != nil {
			t.Fatalf("seed %d: encoding %T: %v", seed, v, err)
		}
		encoded = append(encoded, hex.EncodeToString(body))
		cbody, err := canon.Marshal(s, v)
		if err != nil {
			t.Fatalf("seed %d: encoding %T: %v", seed, v, err)
		}
		canonical = append(canonical, hex.EncodeToString(cbody))
		want = append(want, jsonRoundTrip(t, neutral(s, g)))
	}
	var resp struct {
		Error   string `json:"error"`
		Decoded []struct {
			Neutral   any    `json:"neutral"`
			Reencoded string `json:"reencoded"`
			Error     string `json:"error"`
		} `json:"decoded"`
		Random []struct {
			Hex   string `json:"hex"`
			Error string `json:"error"`
		} `json:"random"`
	}
	if err := runNode(dir, "avro", map[string]any{"schema": text, "encoded": encoded, "random": avscValues}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != "" {
		res.Error = resp.Error
		return
	}
	for i, d := range resp.Decoded {
		switch {
		case d.Error != "":
			res.Problems = append(res.Problems, fmt.Sprintf("Go→avsc value %d: avsc cannot decode it: %s", i, d.Error))
		case !reflect.DeepEqual(d.Neutral, want[i]):
			res.Problems = append(res.Problems, fmt.Sprintf("Go→avsc value %d: avsc decodes %s, Go encoded %s", i, show(d.Neutral), show(want[i])))
		case d.Reencoded != canonical[i]:
			res.Problems = append(res.Problems, fmt.Sprintf("Go→avsc value %d: avsc re-encodes %s, Go encodes %s", i, d.Reencoded, canonical[i]))
		default:
			res.GoToAvsc++
		}
	}
	for i, r := range resp.Random {
		if r.Error != "" {
			res.Problems = append(res.Problems, fmt.Sprintf("avsc→Go value %d: avsc cannot make one: %s", i, r.Error))
			continue
		}
		body, _ := hex.DecodeString(r.Hex)
		var v T
		if err := api.Unmarshal(s, body, &v); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("avsc→Go value %d: the generated Go cannot decode %s: %v", i, r.Hex, err))
			continue
		}
		again, err := canon.Marshal(s, v)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("avsc→Go value %d: the generated Go cannot encode what it decoded from %s: %v", i, r.Hex, err))
			continue
		}
		if !bytes.Equal(again, body) {
			res.Problems = append(res.Problems, fmt.Sprintf("avsc→Go value %d: avsc wrote %s, the generated Go re-encodes %x", i, r.Hex, again))
			continue
		}
		res.AvscToGo++
	}
}

// runNode runs check.js in mode with req on stdin and decodes its answer.
func runNode(dir, mode string, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "check.js"), mode)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node check.js %s: %v\n%s", mode, err, stderr.String())
	}
	return json.Unmarshal(out, resp)
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonRoundTrip gives v as it reads back from JSON, as check.js's answer
// does (numbers float64).
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// neutral is the form check.js gives a decoded value (see neutral there):
// long as a decimal string, float and double as "f:" and the hex of their
// IEEE bits, bytes and fixed as hex, decimal as "d:" and its unscaled
// value, a union as null or {"<branch index>": value}, other logical
// types as their Avro value (days, milliseconds, microseconds).
func neutral(s avro.Schema, v any) any {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch s := s.(type) {
	case *avro.NullSchema:
		return nil
	case *avro.PrimitiveSchema:
		return neutralPrimitive(s, v)
	case *avro.RecordSchema:
		m := v.(map[string]any)
		out := map[string]any{}
		for _, f := range s.Fields() {
			out[f.Name()] = neutral(f.Type(), m[f.Name()])
		}
		return out
	case *avro.EnumSchema:
		return v
	case *avro.FixedSchema:
		if l := s.Logical(); l != nil {
			switch l.Type() {
			case avro.Decimal:
				return unscaled(v.(*big.Rat), l.(*avro.DecimalLogicalSchema).Scale())
			case avro.Duration:
				d := v.(avro.LogicalDuration)
				b := make([]byte, 12)
				for i, x := range []uint32{d.Months, d.Days, d.Milliseconds} {
					b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
				}
				return hex.EncodeToString(b)
			}
		}
		rv := reflect.ValueOf(v)
		b := make([]byte, rv.Len())
		for i := range b {
			b[i] = byte(rv.Index(i).Uint())
		}
		return hex.EncodeToString(b)
	case *avro.ArraySchema:
		out := []any{}
		for _, x := range v.([]any) {
			out = append(out, neutral(s.Items(), x))
		}
		return out
	case *avro.MapSchema:
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = neutral(s.Values(), x)
		}
		return out
	case *avro.UnionSchema:
		if v == nil {
			return nil
		}
		for k, x := range v.(map[string]any) {
			for i, b := range s.Types() {
				if branchName(b) == k {
					return map[string]any{strconv.Itoa(i): neutral(b, x)}
				}
			}
			panic("no branch " + k)
		}
	}
	panic(fmt.Sprintf("no neutral form for %s", s.Type()))
}

func neutralPrimitive(s *avro.PrimitiveSchema, v any) any {
	var lt avro.LogicalType
	if s.Logical() != nil {
		lt = s.Logical().Type()
	}
	switch s.Type() {
	case avro.Boolean, avro.String:
		return v
	case avro.Int:
		switch lt {
		case avro.Date:
			return v.(time.Time).Unix() / 86400
		case avro.TimeMillis:
			return v.(time.Duration).Milliseconds()
		}
		return v
	case avro.Long:
		var n int64
		switch lt {
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			n = v.(time.Time).UnixMilli()
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			n = v.(time.Time).UnixMicro()
		case avro.TimeMicros:
			n = v.(time.Duration).Microseconds()
		default:
			n = v.(int64)
		}
		return strconv.FormatInt(n, 10)
	case avro.Float:
		return fmt.Sprintf("f:%08x", math.Float32bits(v.(float32)))
	case avro.Double:
		return fmt.Sprintf("f:%016x", math.Float64bits(v.(float64)))
	case avro.Bytes:
		if lt == avro.Decimal {
			return unscaled(v.(*big.Rat), s.Logical().(*avro.DecimalLogicalSchema).Scale())
		}
		return hex.EncodeToString(v.([]byte))
	}
	panic("no neutral form for " + string(s.Type()))
}

func unscaled(r *big.Rat, scale int) string {
	n := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !n.IsInt() {
		panic(fmt.Sprintf("decimal %s has more than %d digits after the point", r.RatString(), scale))
	}
	return "d:" + n.Num().String()
}
