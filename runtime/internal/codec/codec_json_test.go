package codec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// codecOrderSchema is a 2020-12 schema with nested objects, an array,
// required fields, formats and a closed object.
const codecOrderSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["id", "customer_id", "placed_at", "items"],
  "additionalProperties": false,
  "properties": {
    "id": {"type": "string", "format": "uuid"},
    "customer_id": {"type": "string", "minLength": 1},
    "placed_at": {"type": "string", "format": "date-time"},
    "email": {"type": "string", "format": "email"},
    "note": {"type": ["string", "null"]},
    "items": {
      "type": "array",
      "minItems": 1,
      "items": {"$ref": "#/$defs/item"}
    }
  },
  "$defs": {
    "item": {
      "type": "object",
      "required": ["sku", "qty"],
      "properties": {
        "sku": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
        "qty": {"type": "integer", "minimum": 1}
      }
    }
  }
}`

type codecItem struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type codecOrder struct {
	ID         string      `json:"id"`
	CustomerID string      `json:"customer_id,omitempty"`
	PlacedAt   string      `json:"placed_at"`
	Email      *string     `json:"email,omitempty"`
	Note       *string     `json:"note,omitempty"`
	Items      []codecItem `json:"items"`
}

func codecValidOrder() codecOrder {
	return codecOrder{
		ID:         "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f",
		CustomerID: "C-42",
		PlacedAt:   "2026-11-30T06:00:00.123Z",
		Items:      []codecItem{{SKU: "ABC-1", Qty: 2}},
	}
}

func codecMustJSON(t testing.TB, schema string) msgtype.Codec {
	t.Helper()
	c, err := NewJSONCodec(schema)
	if err != nil {
		t.Fatalf("NewJSONCodec: %v", err)
	}
	return c
}

func TestJSONCodecRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, schema := range map[string]string{"validated": codecOrderSchema, "no schema": ""} {
		t.Run(name, func(t *testing.T) {
			c := codecMustJSON(t, schema)
			if got := c.ContentType(); got != "application/json" {
				t.Fatalf("content type %q", got)
			}
			in := codecValidOrder()
			note := "leave at the door"
			in.Note = &note
			body, err := c.Encode(ctx, in)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			var out codecOrder
			if err := c.Decode(ctx, body, &out); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if out.ID != in.ID || out.CustomerID != in.CustomerID || out.PlacedAt != in.PlacedAt ||
				len(out.Items) != 1 || out.Items[0] != in.Items[0] || out.Note == nil || *out.Note != note {
				t.Fatalf("round trip: got %+v, want %+v", out, in)
			}
		})
	}
}

func TestJSONCodecEncodeRefusesInvalid(t *testing.T) {
	c := codecMustJSON(t, codecOrderSchema)
	tests := []struct {
		name   string
		mutate func(*codecOrder)
		want   string
	}{
		{"missing property", func(o *codecOrder) { o.CustomerID = "" }, "acemq: invalid message: /customer_id: missing property"},
		{"nested pattern", func(o *codecOrder) { o.Items[0].SKU = "abc" }, "/items/0/sku: 'abc' does not match pattern"},
		{"nested minimum", func(o *codecOrder) { o.Items = append(o.Items, codecItem{SKU: "X-1", Qty: 0}) }, "/items/1/qty: minimum: got 0, want 1"},
		{"empty array", func(o *codecOrder) { o.Items = []codecItem{} }, "/items: minItems: got 0, want 1"},
		{"date-time format", func(o *codecOrder) { o.PlacedAt = "yesterday" }, "/placed_at: 'yesterday' is not valid date-time"},
		{"uuid format", func(o *codecOrder) { o.ID = "not-a-uuid" }, "/id: 'not-a-uuid' is not valid uuid"},
		{"email format", func(o *codecOrder) { e := "nobody"; o.Email = &e }, "/email: 'nobody' is not valid email"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := codecValidOrder()
			tt.mutate(&o)
			body, err := c.Encode(context.Background(), o)
			if err == nil {
				t.Fatalf("Encode accepted an invalid message: %s", body)
			}
			if body != nil {
				t.Errorf("Encode returned a body with its error: %s", body)
			}
			if !errors.Is(err, core.ErrInvalidMessage) {
				t.Errorf("errors.Is(err, core.ErrInvalidMessage) is false for %v", err)
			}
			var se *jsoncheck.SchemaError
			if !errors.As(err, &se) || len(se.Violations) == 0 {
				t.Errorf("errors.As(err, *jsoncheck.SchemaError) failed for %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestJSONCodecEncodeJoinsViolationsSorted(t *testing.T) {
	c := codecMustJSON(t, codecOrderSchema)
	_, err := c.Encode(context.Background(), map[string]any{"id": "x", "extra": 1})
	want := "acemq: invalid message: " +
		"/customer_id: missing property; " +
		"/extra: property not allowed (additionalProperties); " +
		"/id: 'x' is not valid uuid: must have 5 elements; " +
		"/items: missing property; " +
		"/placed_at: missing property"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

func TestJSONCodecDecodeSchemaViolation(t *testing.T) {
	c := codecMustJSON(t, codecOrderSchema)
	tests := []struct{ body, want string }{
		{`{"id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","placed_at":"2026-11-30T06:00:00Z","items":[{"sku":"A-1","qty":1}]}`,
			"/customer_id: missing property"},
		{`{"id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C","placed_at":"2026-11-30T06:00:00Z","items":[{"qty":1}]}`,
			"/items/0/sku: missing property"},
		{`{"id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C","placed_at":"2026-11-30T06:00:00Z","items":[{"sku":"A-1","qty":"two"}]}`,
			"/items/0/qty: got string, want integer"},
		{`{"id":"6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f","customer_id":"C","placed_at":"2026-13-30T06:00:00Z","items":[{"sku":"A-1","qty":1}]}`,
			"/placed_at: '2026-13-30T06:00:00Z' is not valid date-time: invalid date element: parsing time \"2026-13-30\": month out of range"},
		{`[1,2]`, "/: got array, want object"},
	}
	for _, tt := range tests {
		var out codecOrder
		err := c.Decode(context.Background(), []byte(tt.body), &out)
		if err == nil {
			t.Errorf("Decode accepted %s", tt.body)
			continue
		}
		// The exact shape the consumer parks with: "<where>: <what>".
		if err.Error() != tt.want {
			t.Errorf("Decode(%s)\n got  %q\n want %q", tt.body, err, tt.want)
		}
		var se *jsoncheck.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("Decode error %v is not a *jsoncheck.SchemaError", err)
		}
	}
}

func TestJSONCodecDecodeNotJSON(t *testing.T) {
	tests := []struct{ body, want string }{
		{"this is not JSON", "this message is not JSON: invalid character 'h' in literal true (expecting 'r') at offset 1 (line 1, column 2)"},
		{"hello", "this message is not JSON: invalid character 'h' looking for beginning of value at offset 0 (line 1, column 1)"},
		{"{\"id\":\n  \"x\",}", "this message is not JSON: invalid character '}' looking for beginning of object key string at offset 13 (line 2, column 7)"},
		{`{"id":"x"`, "this message is not JSON: it ends too early at offset 9 (line 1, column 10)"},
		{`{"id":"x"} {}`, "this message is not JSON: unexpected data after the JSON value at offset 11 (line 1, column 12)"},
		{"", "this message is not JSON: the body is empty"},
		{"  \n", "this message is not JSON: the body is empty"},
	}
	for _, schema := range []string{codecOrderSchema, ""} {
		c := codecMustJSON(t, schema)
		for _, tt := range tests {
			var out codecOrder
			err := c.Decode(context.Background(), []byte(tt.body), &out)
			if schema == "" && strings.Contains(tt.want, "unexpected data after") {
				// Without a schema json.Unmarshal words trailing data itself.
				if err == nil || !strings.HasPrefix(err.Error(), "this message is not JSON: ") {
					t.Errorf("no schema: Decode(%q) = %v", tt.body, err)
				}
				continue
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("schema=%v Decode(%q)\n got  %v\n want %s", schema != "", tt.body, err, tt.want)
			}
		}
	}
}

func TestJSONCodecDecodeGoTypeMismatch(t *testing.T) {
	// A schema that allows what the Go type cannot hold still gives "<where>: <what>".
	c := codecMustJSON(t, `{"type":"object"}`)
	var out codecOrder
	err := c.Decode(context.Background(), []byte(`{"items":[{"sku":"A-1","qty":"two"}]}`), &out)
	if err == nil || err.Error() != "items.qty: a JSON string does not fit the Go type int" {
		t.Fatalf("got %v", err)
	}
	if err := c.Decode(context.Background(), []byte(`{}`), out); err == nil ||
		!strings.Contains(err.Error(), "want a non-nil pointer") {
		t.Fatalf("decode into a non-pointer: %v", err)
	}
}

func TestJSONCodecDrafts(t *testing.T) {
	// Each draft's own spelling of the same rule; format is asserted in all.
	schemas := map[string]string{
		"draft-07": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["at"],
			"properties":{"at":{"type":"string","format":"date-time"}},"definitions":{"x":{"type":"integer"}}}`,
		"2019-09": `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","required":["at"],
			"properties":{"at":{"type":"string","format":"date-time"}},"$defs":{"x":{"type":"integer"}}}`,
		"2020-12": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["at"],
			"properties":{"at":{"type":"string","format":"date-time"}}}`,
		"default": `{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date-time"}},
			"$defs":{"x":{"type":"integer"}}}`,
	}
	for name, schema := range schemas {
		t.Run(name, func(t *testing.T) {
			c := codecMustJSON(t, schema)
			ctx := context.Background()
			if _, err := c.Encode(ctx, map[string]string{"at": "2026-11-30T06:00:00Z"}); err != nil {
				t.Errorf("valid: %v", err)
			}
			_, err := c.Encode(ctx, map[string]string{"at": "30/11/2026"})
			if !errors.Is(err, core.ErrInvalidMessage) || !strings.Contains(err.Error(), "/at: '30/11/2026' is not valid date-time") {
				t.Errorf("invalid date-time: %v", err)
			}
			_, err = c.Encode(ctx, map[string]string{})
			if !errors.Is(err, core.ErrInvalidMessage) || !strings.Contains(err.Error(), "/at: missing property") {
				t.Errorf("missing: %v", err)
			}
		})
	}
}

func TestJSONCodecDraftDecides(t *testing.T) {
	// 2020-12's prefixItems means nothing to draft-07, and draft-07's
	// array form of items means nothing to 2020-12: $schema decides.
	ctx := context.Background()
	d7 := codecMustJSON(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"}]}`)
	if _, err := d7.Encode(ctx, []any{"a"}); err == nil {
		t.Error("draft-07 tuple items not applied")
	}
	d2020 := codecMustJSON(t, `{"type":"array","prefixItems":[{"type":"integer"}]}`)
	if _, err := d2020.Encode(ctx, []any{"a"}); err == nil {
		t.Error("2020-12 prefixItems not applied by default")
	}
}

func TestJSONCodecBadSchemas(t *testing.T) {
	tests := map[string]struct{ schema, want string }{
		"not JSON":       {`{"type": "object"`, "JSON Schema is not JSON"},
		"unknown type":   {`{"type": "thing"}`, "JSON Schema does not compile"},
		"bad pattern":    {`{"type": "string", "pattern": "("}`, "JSON Schema does not compile"},
		"dangling ref":   {`{"$ref": "#/$defs/nothing"}`, "JSON Schema does not compile"},
		"external ref":   {`{"$ref": "other.json"}`, "the schema must be self-contained"},
		"remote ref":     {`{"$ref": "https://example.com/x.json"}`, "the schema must be self-contained"},
		"file ref":       {`{"$ref": "file:///etc/passwd"}`, "the schema must be self-contained"},
		"unknown draft":  {`{"$schema": "https://example.com/my-draft"}`, "JSON Schema does not compile"},
		"trailing bytes": {`{} x`, "JSON Schema is not JSON"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := NewJSONCodec(tt.schema)
			if err == nil {
				t.Fatalf("compiled: %v", c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestJSONCodecMarshalFailure(t *testing.T) {
	c := codecMustJSON(t, "")
	_, err := c.Encode(context.Background(), make(chan int))
	if err == nil || !strings.Contains(err.Error(), "JSON codec cannot encode a chan int") {
		t.Fatalf("got %v", err)
	}
	if errors.Is(err, core.ErrInvalidMessage) {
		t.Fatalf("a value JSON cannot represent is a programming error, not a schema violation: %v", err)
	}
}

func TestJSONCodecViolationCap(t *testing.T) {
	c := codecMustJSON(t, `{"type":"array","items":{"type":"integer"}}`)
	bad := make([]string, 25)
	_, err := c.Encode(context.Background(), bad)
	var se *jsoncheck.SchemaError
	if !errors.As(err, &se) || len(se.Violations) != 25 {
		t.Fatalf("want 25 violations, got %v", err)
	}
	if !strings.HasSuffix(err.Error(), "; ... and 15 more") || strings.Count(err.Error(), "want integer") != 10 {
		t.Fatalf("cap not applied: %v", err)
	}
}

func TestJSONCodecBundledRefs(t *testing.T) {
	// A schema that refers to another document by $id compiles when that
	// document is bundled into it (under $defs, keeping its $id), which is
	// how a generator hands the runtime one self-contained string.
	const schema = `{
	  "$id": "https://example.com/orders/order.json",
	  "type": "object",
	  "required": ["total"],
	  "properties": {
	    "total": {"$ref": "https://example.com/common/money.json"},
	    "lines": {"type": "array", "items": {"$ref": "line.json"}}
	  },
	  "$defs": {
	    "money": {
	      "$id": "https://example.com/common/money.json",
	      "type": "object", "required": ["amount", "currency"],
	      "properties": {"amount": {"type": "string", "pattern": "^[0-9]+\\.[0-9]{2}$"},
	                     "currency": {"enum": ["EUR", "USD"]}}
	    },
	    "line": {"$id": "line.json", "type": "object", "required": ["sku"]}
	  }
	}`
	c := codecMustJSON(t, schema)
	ctx := context.Background()
	if _, err := c.Encode(ctx, map[string]any{"total": map[string]any{"amount": "1.50", "currency": "EUR"}}); err != nil {
		t.Fatalf("valid: %v", err)
	}
	var out map[string]any
	err := c.Decode(ctx, []byte(`{"total":{"amount":"1.5","currency":"GBP"},"lines":[{}]}`), &out)
	// (the validator quotes the pattern JSON-style, so its backslash is doubled)
	want := `/lines/0/sku: missing property; /total/amount: '1.5' does not match pattern '^[0-9]+\\.[0-9]{2}$'; /total/currency: value must be one of 'EUR', 'USD'`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
