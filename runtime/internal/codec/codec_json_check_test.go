package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// checkedOrder is a hand-written jsoncheck.Checker of codecBenchSchema's order,
// as acemq-gen writes one: it checks qty's minimum only.
func checkedOrder(calls *int) jsoncheck.Checker {
	return func(v any, c *jsoncheck.Check) bool {
		var o codecBenchOrder
		switch x := v.(type) {
		case codecBenchOrder:
			o = x
		case *codecBenchOrder:
			o = *x
		default:
			return false
		}
		*calls++
		items := &jsoncheck.At{Key: "items"}
		for i, it := range o.Items {
			if it.Qty < 1 {
				c.Fail(&jsoncheck.At{Up: &jsoncheck.At{Up: items, Index: i, Item: true}, Key: "qty"}, "minimum")
			}
		}
		return true
	}
}

// A value the check passes is valid without the reference; one it does
// not pass gets the reference's error, byte for byte; a value of another
// type goes to the reference.
func TestJSONCodecCheckedEncode(t *testing.T) {
	var calls int
	mt := newCheckedJSONType[codecBenchOrder]("test.checked.v1", codecBenchSchema, checkedOrder(&calls), nil)
	checked, err := mt.Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := codecMustJSON(t, codecBenchSchema)
	ctx := t.Context()

	good := codecBenchValue()
	if _, err := checked.Encode(ctx, good); err != nil || calls != 1 {
		t.Fatalf("valid order: %v (check called %d times)", err, calls)
	}
	bad := codecBenchValue()
	bad.Items[1].Qty = 0
	bad.ID = "not-a-uuid" // the check does not look at it; the reference reports both
	_, gotErr := checked.Encode(ctx, bad)
	_, wantErr := ref.Encode(ctx, bad)
	if gotErr == nil || gotErr.Error() != wantErr.Error() {
		t.Fatalf("invalid order: checked codec says %v, reference %v", gotErr, wantErr)
	}
	var se *jsoncheck.SchemaError
	if !errors.Is(gotErr, core.ErrInvalidMessage) || !errors.As(gotErr, &se) || se.Violations[0].Location != "/id" {
		t.Errorf("error %v: want core.ErrInvalidMessage and a *jsoncheck.SchemaError starting at /id", gotErr)
	}
	if err := mt.Validate(bad); err == nil || err.Error() != wantErr.Error() {
		t.Errorf("Validate = %v, want %v", err, wantErr)
	}
	if err := mt.Validate(good); err != nil {
		t.Errorf("Validate(valid) = %v", err)
	}
	c, ok := generatedCheck(mt, bad)
	if !ok || c.Passed() || c.Err().Error() != "/items/1/qty: minimum" {
		t.Errorf("the generated check alone = %v, %v", c, ok)
	}
	// A map is no codecBenchOrder: the reference decides.
	if _, err := checked.Encode(ctx, map[string]any{"id": 1}); err == nil || !errors.Is(err, core.ErrInvalidMessage) {
		t.Errorf("a map: %v", err)
	}
}

// orderShape is codecBenchSchema's decode shape, as acemq-gen writes one.
func orderShape() *jsoncheck.Shape {
	item := &jsoncheck.Shape{Kind: jsoncheck.Object, Fields: []jsoncheck.Member{
		{Name: "sku", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "qty", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "price", Required: true, Shape: &jsoncheck.Shape{}},
	}}
	return &jsoncheck.Shape{Kind: jsoncheck.Object, Closed: true, Fields: []jsoncheck.Member{
		{Name: "id", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "customer_id", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "email", Shape: &jsoncheck.Shape{}},
		{Name: "placed_at", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "status", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "total", Required: true, Shape: &jsoncheck.Shape{}},
		{Name: "items", Required: true, Shape: &jsoncheck.Shape{Kind: jsoncheck.Array, Elem: item}},
	}}
}

// Decode with a shape: a valid body decodes without the reference; a body
// the scan or the check does not pass gets exactly the reference's error;
// the scan reports a missing member, a null, an unknown member of a closed
// object, and gives up on a key in another case.
func TestJSONCodecCheckedDecode(t *testing.T) {
	var calls int
	mt := newCheckedJSONType[codecBenchOrder]("test.checked.v3", codecBenchSchema, checkedOrder(&calls), orderShape)
	checked, err := mt.Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := codecMustJSON(t, codecBenchSchema)
	ctx := t.Context()
	good, _ := json.Marshal(codecBenchValue())
	var v codecBenchOrder
	if err := checked.Decode(ctx, good, &v); err != nil || calls != 1 || v.Items[2].SKU != "GHI-333" {
		t.Fatalf("valid body: %v, %d calls, %+v", err, calls, v)
	}
	for _, tc := range []struct{ body, scan string }{
		{strings.Replace(string(good), `"customer_id":"C-42",`, "", 1), "/customer_id: missing property"},
		{strings.Replace(string(good), `"customer_id":"C-42"`, `"customer_id":null`, 1), "/customer_id: got null"},
		{strings.Replace(string(good), `"qty":4`, `"qty":0`, 1), "/items/2/qty: minimum"},
		{strings.Replace(string(good), `{"id"`, `{"extra":1,"id"`, 1), "/extra: property not allowed"},
		{strings.Replace(string(good), `"sku":"DEF-22",`, ``, 1), "/items/1/sku: missing property"},
		{strings.Replace(string(good), `"status"`, `"Status":"x","status"`, 1), "undecided"},
		{`{"id": 7}`, "not a Go value"},
		{`{"id"`, "not a Go value"},
	} {
		var got, want codecBenchOrder
		gotErr := checked.Decode(ctx, []byte(tc.body), &got)
		wantErr := ref.Decode(ctx, []byte(tc.body), &want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: checked %v (%+v), reference %v (%+v)", tc.body, gotErr, got, wantErr, want)
		}
		c, ok := generatedDecodeCheck(mt, []byte(tc.body))
		var scan string
		switch {
		case !ok:
			scan = "not a Go value"
		case c.IsUndecided():
			scan = "undecided"
		default:
			scan = fmt.Sprint(c.Err())
		}
		if scan != tc.scan {
			t.Errorf("%s: the decode check says %q, want %q", tc.body, scan, tc.scan)
		}
	}
}

// generatedCheck runs mt's generated check alone, without the reference
// (impltest.GeneratedCheck, which this package's tests cannot import).
func generatedCheck[T any](mt *msgtype.MessageType[T], v T) (*jsoncheck.Check, bool) {
	c := new(jsoncheck.Check)
	check, _ := msgtype.JSONCheckOf(mt)
	if check == nil || !check(v, c) {
		return nil, false
	}
	return c, true
}

// generatedDecodeCheck runs mt's decode check alone
// (impltest.GeneratedDecodeCheck).
func generatedDecodeCheck[T any](mt *msgtype.MessageType[T], body []byte) (*jsoncheck.Check, bool) {
	var v T
	check, shape := msgtype.JSONCheckOf(mt)
	if check == nil || shape == nil || json.Unmarshal(body, &v) != nil {
		return nil, false
	}
	c := new(jsoncheck.Check)
	jsoncheck.Scan(c, body, shape())
	if !check(&v, c) {
		return nil, false
	}
	return c, true
}

// boundTotalCalls counts boundTotal's UnmarshalJSON calls: how often
// Decode unmarshals the body (the codec zeroes v first, so the count
// cannot live in it).
var boundTotalCalls int

type boundTotal struct{ v float64 }

func (b *boundTotal) UnmarshalJSON(p []byte) error {
	boundTotalCalls++
	return json.Unmarshal(p, &b.v)
}

type boundOrder struct {
	ID    string     `json:"id"`
	Total boundTotal `json:"total"`
}

const boundSchema = `{"type": "object", "required": ["id", "total"],
  "properties": {"id": {"type": "string"}, "total": {"type": "number", "minimum": 0}}}`

// A decoded value the generated check cannot decide (a total equal to its
// minimum: the float64 may stand for -1e-400, which is below it) goes to
// the reference validator, and when the reference passes the body the
// value is the one already unmarshalled: the body is unmarshalled once, not
// twice; when the reference refuses it, v is zeroed and the error is the
// reference's, as before.
func TestJSONCodecCheckedDecodeUnmarshalsOnce(t *testing.T) {
	check := func(v any, c *jsoncheck.Check) bool {
		o, ok := v.(*boundOrder)
		if !ok {
			return false
		}
		if c.Decoded() && o.Total.v == 0 {
			c.Undecided()
		}
		if o.Total.v < 0 {
			c.Fail(&jsoncheck.At{Key: "total"}, "minimum")
		}
		return true
	}
	shape := func() *jsoncheck.Shape {
		return &jsoncheck.Shape{Kind: jsoncheck.Object, Fields: []jsoncheck.Member{
			{Name: "id", Required: true, Shape: &jsoncheck.Shape{}},
			{Name: "total", Required: true, Shape: &jsoncheck.Shape{}},
		}}
	}
	codec, err := newCheckedJSONType[boundOrder]("test.bound.v1", boundSchema, check, shape).Codec(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body, err string
		calls     int
		id        string
	}{
		{`{"id":"a","total":3}`, "<nil>", 1, "a"},                               // the check passes
		{`{"id":"b","total":0}`, "<nil>", 1, "b"},                               // undecided, the reference passes: kept
		{`{"id":"c","total":-0}`, "<nil>", 1, "c"},                              // undecided, the reference passes: kept
		{`{"id":"d","total":-1e-400}`, "/total: minimum: got 0, want 0", 1, ""}, // undecided, refused: zeroed
		{`{"id":"e","total":-2}`, "/total: minimum: got -2, want 0", 1, ""},     // failed, refused: zeroed
	} {
		boundTotalCalls = 0
		v := boundOrder{ID: "stale"}
		err := codec.Decode(t.Context(), []byte(tc.body), &v)
		calls := boundTotalCalls
		if !strings.HasPrefix(fmt.Sprint(err), tc.err) || calls != tc.calls || v.ID != tc.id {
			t.Errorf("%s: %v, %d UnmarshalJSON calls, id %q; want %s..., %d, %q", tc.body, err, calls, v.ID, tc.err, tc.calls, tc.id)
		}
	}
}

// newCheckedJSONType is runtime's: a JSON message type with a generated
// check (and its decode shape).
func newCheckedJSONType[T any](name, schema string, check jsoncheck.Checker, shape func() *jsoncheck.Shape) *msgtype.MessageType[T] {
	mt := msgtype.New[T](name, msgtype.FormatJSON, "", schema, nil, Codecs{})
	msgtype.SetJSONCheck(mt, check, shape)
	return mt
}
