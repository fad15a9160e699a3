package rtall

// This file is copied into the corpus module (see corpus_test.go in
// internal/gen/schema) beside a generated cases_test.go that lists, for every
// Avro corpus file that maps, its schema text and its root Go type.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// api is a configuration of its own, as the runtime uses: the generated
// types need no registration with it.
var api = avro.Config{MaxByteSliceSize: 16 << 20}.Freeze()

// roundTrip encodes random generic values of the schema, decodes each
// into T, encodes T again and checks that both encodings decode to the
// same generic value; then does the same through encoding/json.
func roundTrip[T any](t *testing.T, text string) {
	t.Helper()
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	for seed := int64(0); seed < 8; seed++ {
		rng := rand.New(rand.NewSource(seed))
		data, err := api.Marshal(s, randomValue(s, rng, 0))
		if err != nil {
			t.Fatalf("seed %d: encoding a random value: %v", seed, err)
		}
		var v T
		if err := api.Unmarshal(s, data, &v); err != nil {
			t.Fatalf("seed %d: decoding into %T: %v", seed, v, err)
		}
		out, err := api.Marshal(s, v)
		if err != nil {
			t.Fatalf("seed %d: encoding %T: %v", seed, v, err)
		}
		same(t, s, data, out, fmt.Sprintf("seed %d: Avro", seed))

		js, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("seed %d: json.Marshal: %v", seed, err)
		}
		var w T
		if err := json.Unmarshal(js, &w); err != nil {
			t.Fatalf("seed %d: json.Unmarshal: %v\n%s", seed, err, js)
		}
		out, err = api.Marshal(s, w)
		if err != nil {
			t.Fatalf("seed %d: encoding %T after JSON: %v", seed, w, err)
		}
		same(t, s, data, out, fmt.Sprintf("seed %d: JSON", seed))
	}
}

func same(t *testing.T, s avro.Schema, a, b []byte, what string) {
	t.Helper()
	var ga, gb any
	if err := api.Unmarshal(s, a, &ga); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := api.Unmarshal(s, b, &gb); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(ga, gb) {
		t.Fatalf("%s round trip changed the value:\nwant %#v\ngot  %#v", what, ga, gb)
	}
}

// randomValue builds a generic value (as hamba/avro decodes into any) of
// schema s. Maps get at most one entry so that encodings compare.
func randomValue(s avro.Schema, rng *rand.Rand, depth int) any {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	switch s := s.(type) {
	case *avro.NullSchema:
		return nil
	case *avro.PrimitiveSchema:
		return randomPrimitive(s, rng)
	case *avro.RecordSchema:
		m := map[string]any{}
		for _, f := range s.Fields() {
			m[f.Name()] = randomValue(f.Type(), rng, depth+1)
		}
		return m
	case *avro.EnumSchema:
		return s.Symbols()[rng.Intn(len(s.Symbols()))]
	case *avro.FixedSchema:
		if l := s.Logical(); l != nil {
			switch l.Type() {
			case avro.Decimal:
				return randomDecimal(l.(*avro.DecimalLogicalSchema), rng)
			case avro.Duration:
				return avro.LogicalDuration{Months: uint32(rng.Intn(12)), Days: uint32(rng.Intn(30)), Milliseconds: uint32(rng.Intn(1e6))}
			}
		}
		arr := reflect.New(reflect.ArrayOf(s.Size(), reflect.TypeOf(byte(0)))).Elem()
		for i := 0; i < s.Size(); i++ {
			arr.Index(i).SetUint(uint64(rng.Intn(256)))
		}
		return arr.Interface()
	case *avro.ArraySchema:
		n := rng.Intn(3)
		if depth > 3 {
			n = 0
		}
		out := make([]any, n)
		for i := range out {
			out[i] = randomValue(s.Items(), rng, depth+1)
		}
		return out
	case *avro.MapSchema:
		m := map[string]any{}
		if depth <= 3 && rng.Intn(2) == 0 {
			m["k"] = randomValue(s.Values(), rng, depth+1)
		}
		return m
	case *avro.UnionSchema:
		types := s.Types()
		i := rng.Intn(len(types))
		if depth > 3 { // prefer null, then a branch that ends recursion
			for j, b := range types {
				if b.Type() == avro.Null {
					i = j
				}
			}
		}
		b := types[i]
		if b.Type() == avro.Null {
			return nil
		}
		return map[string]any{branchName(b): randomValue(b, rng, depth+1)}
	}
	panic(fmt.Sprintf("no random value for %s", s.Type()))
}

func branchName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		name += "." + string(l.Logical().Type())
	}
	return name
}

func randomPrimitive(s *avro.PrimitiveSchema, rng *rand.Rand) any {
	var lt avro.LogicalType
	if s.Logical() != nil {
		lt = s.Logical().Type()
	}
	ms := rng.Int63n(4e12)
	switch s.Type() {
	case avro.Boolean:
		return rng.Intn(2) == 0
	case avro.Int:
		switch lt {
		case avro.Date:
			return time.Unix(int64(rng.Intn(40000))*86400, 0).UTC()
		case avro.TimeMillis:
			return time.Duration(rng.Intn(86400000)) * time.Millisecond
		}
		return rng.Intn(1<<31) - 1<<30
	case avro.Long:
		switch lt {
		case avro.TimestampMillis, avro.LocalTimestampMillis:
			return time.UnixMilli(ms).UTC()
		case avro.TimestampMicros, avro.LocalTimestampMicros:
			return time.UnixMicro(ms*1000 + rng.Int63n(1000)).UTC()
		case avro.TimeMicros:
			return time.Duration(rng.Int63n(86400000000)) * time.Microsecond
		}
		return rng.Int63() - 1<<62
	case avro.Float:
		return float32(rng.NormFloat64())
	case avro.Double:
		return rng.NormFloat64()
	case avro.Bytes:
		if lt == avro.Decimal {
			return randomDecimal(s.Logical().(*avro.DecimalLogicalSchema), rng)
		}
		b := make([]byte, rng.Intn(5))
		rng.Read(b)
		return b
	case avro.String:
		words := []string{"", "a", "héllo", "名前", "*/", "6f1c8e2a-0b7d-4c5e-9a3f-2d1e0c9b8a7f"}
		return strings.Repeat(words[rng.Intn(len(words))], 1+rng.Intn(2))
	}
	panic("no random value for " + string(s.Type()))
}

func randomDecimal(d *avro.DecimalLogicalSchema, rng *rand.Rand) *big.Rat {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale())), nil)
	limit := int64(1e6)
	if d.Precision() < 7 {
		limit = 1
		for i := 0; i < d.Precision(); i++ {
			limit *= 10
		}
	}
	return new(big.Rat).SetFrac(big.NewInt(rng.Int63n(limit)-limit/2), den)
}
