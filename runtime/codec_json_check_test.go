package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The native uuid check says what the reference validator's says, on
// edge cases and on random strings made of the characters that matter.
func TestJSONFormatUUIDIsTheReferences(t *testing.T) {
	jsonFormatsOnce.Do(jsonLoadFormats)
	ref := jsonFormats["uuid"]
	cases := []string{
		"", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", "6F1C2A8E-3B4D-4C5E-8F90-1A2B3C4D5E6F",
		"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f0",
		"6f1c2a8e3b4d-4c5e-8f90-1a2b3c4d5e6f-", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6g",
		"6f1c2a8e-3b4d-4c5e-8f901a2b3c4d5e6f-", "------------------------------------",
		"6f1c2a8é-3b4d-4c5e-8f90-1a2b3c4d5e6f", "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6\u00ff",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789abcdefABCDEFgG-é\x00"
	for range 20000 {
		b := []byte(cases[1])
		for range r.IntN(3) + 1 {
			b[r.IntN(len(b))] = chars[r.IntN(len(chars))]
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := jsonIsUUID(s), ref.Validate(s) == nil; got != want {
			t.Errorf("uuid %q: native %v, reference %v", s, got, want)
		}
	}
}

// checkedOrder is a hand-written JSONChecker of codecBenchSchema's order,
// as acemq-gen writes one: it checks qty's minimum only.
func checkedOrder(calls *int) JSONChecker {
	return func(v any, c *JSONCheck) bool {
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
		items := &JSONAt{Key: "items"}
		for i, it := range o.Items {
			if it.Qty < 1 {
				c.Fail(&JSONAt{Up: &JSONAt{Up: items, Index: i, Item: true}, Key: "qty"}, "minimum")
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
	mt := JSONTypeChecked[codecBenchOrder]("test.checked.v1", codecBenchSchema, checkedOrder(&calls))
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
	var se *SchemaError
	if !errors.Is(gotErr, ErrInvalidMessage) || !errors.As(gotErr, &se) || se.Violations[0].Location != "/id" {
		t.Errorf("error %v: want ErrInvalidMessage and a *SchemaError starting at /id", gotErr)
	}
	if err := mt.Validate(bad); err == nil || err.Error() != wantErr.Error() {
		t.Errorf("Validate = %v, want %v", err, wantErr)
	}
	if err := mt.Validate(good); err != nil {
		t.Errorf("Validate(valid) = %v", err)
	}
	c, ok := mt.GeneratedCheck(bad)
	if !ok || c.Passed() || c.Err().Error() != "/items/1/qty: minimum" {
		t.Errorf("GeneratedCheck = %v, %v", c, ok)
	}
	// A map is no codecBenchOrder: the reference decides.
	if _, err := checked.Encode(ctx, map[string]any{"id": 1}); err == nil || !errors.Is(err, ErrInvalidMessage) {
		t.Errorf("a map: %v", err)
	}
}

// WithReferenceValidation gives the type's codec without its check.
func TestWithReferenceValidation(t *testing.T) {
	var calls int
	mt := JSONTypeChecked[codecBenchOrder]("test.checked.v2", codecBenchSchema, checkedOrder(&calls))
	var cfg dialConfig
	WithReferenceValidation().applyDial(&cfg)
	ref, err := mt.codecFor(&Connection{cfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Encode(t.Context(), codecBenchValue()); err != nil || calls != 0 {
		t.Errorf("reference codec: %v, check called %d times", err, calls)
	}
	fast, err := mt.codecFor(&Connection{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fast.Encode(t.Context(), codecBenchValue()); err != nil || calls != 1 {
		t.Errorf("checked codec: %v, check called %d times", err, calls)
	}
}

// orderShape is codecBenchSchema's decode shape, as acemq-gen writes one.
func orderShape() *JSONShape {
	item := &JSONShape{Kind: JSONObject, Fields: []JSONMember{
		{Name: "sku", Required: true, Shape: &JSONShape{}},
		{Name: "qty", Required: true, Shape: &JSONShape{}},
		{Name: "price", Required: true, Shape: &JSONShape{}},
	}}
	return &JSONShape{Kind: JSONObject, Closed: true, Fields: []JSONMember{
		{Name: "id", Required: true, Shape: &JSONShape{}},
		{Name: "customer_id", Required: true, Shape: &JSONShape{}},
		{Name: "email", Shape: &JSONShape{}},
		{Name: "placed_at", Required: true, Shape: &JSONShape{}},
		{Name: "status", Required: true, Shape: &JSONShape{}},
		{Name: "total", Required: true, Shape: &JSONShape{}},
		{Name: "items", Required: true, Shape: &JSONShape{Kind: JSONArray, Elem: item}},
	}}
}

// Decode with a shape: a valid body decodes without the reference; a body
// the scan or the check does not pass gets exactly the reference's error;
// the scan reports a missing member, a null, an unknown member of a closed
// object, and gives up on a key in another case.
func TestJSONCodecCheckedDecode(t *testing.T) {
	var calls int
	mt := JSONTypeChecked[codecBenchOrder]("test.checked.v3", codecBenchSchema, checkedOrder(&calls), DecodeShape(orderShape))
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
		c, ok := mt.GeneratedDecodeCheck([]byte(tc.body))
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
