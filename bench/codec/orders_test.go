package codec_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/acemqimpl/impltest"
)

// orderBody is acemqbench's JSON order of size ("1k" or "100") as the
// generated publisher writes it.
func orderBody(t testing.TB, size string) []byte {
	v, _ := orders.Values(size)
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// Both of acemqbench's orders are decided by the generated decode check,
// without the reference validator: the 100 B order's "total":0 is on its
// minimum 0, which the scan decides on the number's text. Numbers a
// float64 rounds onto that bound are decided as the reference decides them,
// and a body the check refuses is parked with the reference's text.
func TestOrdersDecodeWithoutTheReference(t *testing.T) {
	mt := orders.TypeOfOrderJSON()
	for _, size := range []string{"1k", "100"} {
		c, ok := impltest.GeneratedDecodeCheck(mt, orderBody(t, size))
		if !ok || c.IsUndecided() || c.Err() != nil {
			t.Errorf("%s order: decoded %v, undecided %v, %v; want decided and valid", size, ok, ok && c.IsUndecided(), c.Err())
		}
	}
	body := string(orderBody(t, "100"))
	if !strings.Contains(body, `"total":0,`) {
		t.Fatalf("the 100 B order has no \"total\":0: %s", body)
	}
	codec, err := mt.Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := runtime.NewJSONCodec(mt.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		total string
		valid bool
	}{
		{"0", true}, {"-0", true}, {"0.0", true}, {"0e5", true}, {"1e-400", true}, {"0.000000000000000000001", true},
		{"-1e-400", false}, {"-0.000000000000000000001", false}, {"-1", false},
	} {
		b := []byte(strings.Replace(body, `"total":0,`, `"total":`+c.total+`,`, 1))
		g, ok := impltest.GeneratedDecodeCheck(mt, b)
		if !ok || g.IsUndecided() || (g.Err() == nil) != c.valid {
			t.Errorf("total %s: the decode check says decoded %v, undecided %v, %v; want valid %v", c.total, ok, ok && g.IsUndecided(), g.Err(), c.valid)
		}
		var v, rv orders.OrderJSON
		err, refErr := codec.Decode(context.Background(), b, &v), ref.Decode(context.Background(), b, &rv)
		var se *runtime.SchemaError
		switch {
		case c.valid && (err != nil || refErr != nil):
			t.Errorf("total %s: Decode: %v, the reference: %v", c.total, err, refErr)
		case !c.valid && (!errors.As(err, &se) || refErr == nil || err.Error() != refErr.Error() || !strings.HasPrefix(err.Error(), "/total: minimum: ")):
			t.Errorf("total %s: Decode says %v, the reference %v", c.total, err, refErr)
		case !c.valid && v.OrderID != "":
			t.Errorf("total %s: a refused body left %+v", c.total, v)
		}
	}
}

// BenchmarkJSONDecodeOrders is the generated type's Decode (what
// X1-consume and C1-json's typed side run per delivery) of acemqbench's two
// orders.
func BenchmarkJSONDecodeOrders(b *testing.B) {
	for _, size := range []string{"1k", "100"} {
		b.Run("body="+size, func(b *testing.B) {
			c, err := orders.TypeOfOrderJSON().Codec(nil)
			if err != nil {
				b.Fatal(err)
			}
			body, ctx := orderBody(b, size), context.Background()
			b.ReportAllocs()
			for b.Loop() {
				var v orders.OrderJSON
				if err := c.Decode(ctx, body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
