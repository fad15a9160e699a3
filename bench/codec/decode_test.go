package codec_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/internal/decodetest"
	"github.com/acemq/acemq-go/internal/encodetest"
	"github.com/acemq/acemq-go/runtime"
)

// decodeBodies are the bodies the decoder tests start from: the bench's
// two orders, n plain orders (plainOrder), and n values filled at random
// (encodetest.Fill: escapes, nulls, odd numbers), marshalled.
func decodeBodies[T any](t testing.TB, conv func(orders.OrderJSON) T, n int, seed uint64) [][]byte {
	var out [][]byte
	r := rand.New(rand.NewPCG(seed, 23))
	for i := range n + 2 {
		v, _ := orders.Values("1k")
		switch i {
		case 0:
		case 1:
			v, _ = orders.Values("100")
		default:
			v = plainOrder(r)
		}
		b, err := json.Marshal(conv(v))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	data := make([]byte, 1024)
	for range n {
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		var v T
		encodetest.Fill(encodetest.NewEncodeSource(data), reflect.ValueOf(&v).Elem(), 3)
		if b, err := json.Marshal(v); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// plainOrder is an order a decoder takes, drawn from r: strings without
// escapes (some not ASCII), times of every precision and offset, every
// optional member present or not, 0 to 5 items, numbers of any size.
func plainOrder(r *rand.Rand) orders.OrderJSON {
	const letters = "abcXYZ019 -_.:/éß日"
	str := func() string {
		rs := []rune(letters)
		b := make([]rune, r.IntN(12))
		for i := range b {
			b[i] = rs[r.IntN(len(rs))]
		}
		return string(b)
	}
	num := func() float64 {
		switch r.IntN(4) {
		case 0:
			return float64(r.IntN(100000)) / 100
		case 1:
			return r.Float64() * 1e6
		case 2:
			return r.ExpFloat64() * 1e-9
		}
		return float64(r.IntN(10))
	}
	v, _ := orders.Values("1k")
	v.OrderID, v.CustomerID, v.Currency = "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", str(), "EUR"
	v.Status = []orders.OrderJSONStatus{orders.OrderJSONStatusPlaced, orders.OrderJSONStatusPaid, orders.OrderJSONStatusShipped}[r.IntN(3)]
	v.PlacedAt = time.Unix(r.Int64N(4e9), r.Int64N(1e9)*int64(r.IntN(2))).In(time.FixedZone("", (r.IntN(49)-24)*1800))
	v.Email, v.Note = nil, nil
	if r.IntN(2) == 0 {
		e := str() + "@example.com"
		v.Email = &e
	}
	if r.IntN(2) == 0 {
		n := str()
		v.Note = &n
	}
	v.Items = v.Items[:r.IntN(6)]
	for i := range v.Items {
		v.Items[i] = orders.OrderJSONItemsItem{Sku: "SKU-" + str(), Name: str(), Qty: r.Int64N(1 << 40), Price: num()}
	}
	v.Total = num()
	return v
}

// TestGeneratedDecodersAreUnmarshal: the decoder acemq-gen wrote for each
// of the bench's JSON message types gives json.Unmarshal's value and
// DecodeChecked's verdict whenever it takes a body, on the bench's orders,
// random values and thousands of mutations of each (keys in another case,
// escapes, nulls, keys twice, unknown keys, odd numbers, bad dates,
// truncation); the codec decodes each as the reference codec does. It
// takes both orders and every plain one, and some mutations but not all,
// so both branches run.
func TestGeneratedDecodersAreUnmarshal(t *testing.T) {
	const n = 30
	check := func(name string, valid [][]byte, tookValid, tookMutated, mutated int) {
		t.Helper()
		t.Logf("%s: took %d of %d valid bodies, %d of %d mutations", name, tookValid, len(valid), tookMutated, mutated)
		if tookValid < n+2 || tookMutated == 0 || tookMutated == mutated {
			t.Errorf("%s: the decoder took %d of %d bodies and %d of %d mutations; want the %d plain ones or more and some mutations, not all",
				name, tookValid, len(valid), tookMutated, mutated, n+2)
		}
	}
	id := func(v orders.OrderJSON) orders.OrderJSON { return v }
	run := func(name string, mt *runtime.MessageType[orders.OrderJSON]) {
		valid := decodeBodies(t, id, n, 1)
		tv, tm, m := decodetest.Differential(t, mt, valid, 1)
		check(name, valid, tv, tm, m)
		for _, body := range valid[:2] {
			if took, _ := decodetest.DecodeIsUnmarshal(t, mt, body); !took {
				t.Errorf("%s: the decoder did not take the bench's order %s", name, body)
			}
		}
	}
	run("OrderJSON", orders.TypeOfOrderJSON())
	price := decodeBodies(t, func(v orders.OrderJSON) orders.PriceOrder { return orders.PriceOrder(v) }, n, 2)
	tv, tm, m := decodetest.Differential(t, orders.TypeOfPriceOrder(), price, 2)
	check("PriceOrder", price, tv, tm, m)
	priced := decodeBodies(t, func(v orders.OrderJSON) orders.OrderPriced {
		return orders.OrderPriced{OrderID: v.OrderID, Total: v.Total}
	}, n, 3)
	tv, tm, m = decodetest.Differential(t, orders.TypeOfOrderPriced(), priced, 3)
	check("OrderPriced", priced, tv, tm, m)
}

// FuzzJSONDecoderIsUnmarshal: the bench order's decoder against
// json.Unmarshal, the decode check and the reference codec on the
// fuzzer's bodies.
func FuzzJSONDecoderIsUnmarshal(f *testing.F) {
	decodetest.DecodeFuzz(f, orders.TypeOfOrderJSON(), decodeBodies(f, func(v orders.OrderJSON) orders.OrderJSON { return v }, 8, 4))
}

// The generated decoder's strings are a copy of the body (one for all of
// them), not the body's bytes: a body overwritten after the decode leaves
// the value as decoded. The 1 KB order decodes in 5 allocations (34 when
// each string was its own, before the arrays and formats were trimmed).
func TestJSONDecodedStringsOutliveTheBody(t *testing.T) {
	c, err := orders.TypeOfOrderJSON().Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, size := range []string{"1k", "100"} {
		body := orderBody(t, size)
		var want orders.OrderJSON
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		if took, _ := decodetest.DecodeIsUnmarshal(t, orders.TypeOfOrderJSON(), body); !took {
			t.Fatalf("%s: the generated decoder did not take the bench's order", size)
		}
		var got orders.OrderJSON
		if err := c.Decode(ctx, body, &got); err != nil {
			t.Fatal(err)
		}
		for i := range body {
			body[i] = 'x'
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: after the body was overwritten the value is %+v, want %+v", size, got, want)
		}
	}
	body := orderBody(t, "1k")
	allocs := testing.AllocsPerRun(200, func() {
		var v orders.OrderJSON
		if err := c.Decode(ctx, body, &v); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 5 {
		t.Errorf("the 1 KB order decodes in %.1f allocations, want at most 5", allocs)
	}
}
