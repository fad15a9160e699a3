package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The names: section switches Go's initialisms off and adds a team's own;
// every stage (message, queue, field, enum constant) follows it.
func TestNamesSection(t *testing.T) {
	files := map[string]string{"a.json": `{"type": "object", "properties": {"order_id": {"type": "string"}, "sku_url": {"type": "string"},
		"currency": {"enum": ["EUR", "USD"]}}, "required": ["order_id", "sku_url", "currency"]}`}
	const msgs = "messages:\n  api_order: {type: a, schema: a.json}\nqueues:\n  order-ids: {consumes: [api_order]}\n"
	for _, c := range []struct {
		name, names                          string
		msg, queue, id, url, eur, handlerFor string
	}{
		{"default", "", "APIOrder", "OrderIDs", "OrderID", "SkuURL", "APIOrderCurrencyEUR", "HandleAPIOrder"},
		{"off", "names: {initialisms: false}\n", "ApiOrder", "OrderIds", "OrderId", "SkuUrl", "ApiOrderCurrencyEUR", "HandleApiOrder"},
		{"off, own", "names: {initialisms: false, add: [sku]}\n", "ApiOrder", "OrderIds", "OrderId", "SKUUrl", "ApiOrderCurrencyEUR", "HandleApiOrder"},
		{"on, own", "names: {add: [SKU]}\n", "APIOrder", "OrderIDs", "OrderID", "SKUURL", "APIOrderCurrencyEUR", "HandleAPIOrder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := build(t, "version: 1\npackage: p\n"+c.names+msgs, files)
			if err != nil {
				t.Fatal(err)
			}
			msg, q := m.Messages[0], m.Queues[0]
			if msg.GoName != c.msg || q.GoName != c.queue || msg.HandlerMethod != c.handlerFor {
				t.Errorf("message %s (handler method %s), queue %s; want %s (%s), %s", msg.GoName, msg.HandlerMethod, q.GoName, c.msg, c.handlerFor, c.queue)
			}
			var fields []string
			for _, f := range msg.Root.Fields {
				fields = append(fields, f.GoName)
			}
			if len(fields) != 3 || fields[0] != c.id || fields[1] != c.url {
				t.Errorf("fields %v, want %s %s", fields, c.id, c.url)
			}
			cur := msg.Root.Fields[2].Type.Named
			if cur == nil || cur.Values[0].GoName != c.eur {
				t.Errorf("currency enum %+v, want constant %s", cur, c.eur)
			}
		})
	}
}

// Every name a type, field or enum constant has stays when messages are
// reordered or added: names come from where a type is defined, and the
// few clashes left are settled in the order of the messages' Go names.
func TestNamesStable(t *testing.T) {
	files := map[string]string{
		"shipping.json": `{"type": "object", "properties": {"to": {"$ref": "#/$defs/address"}, "common": {"$ref": "common.json#/$defs/address"}},
			"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}}}`,
		"billing.json": `{"type": "object", "properties": {"to": {"$ref": "#/$defs/address"}, "line": {"type": "object", "properties": {"sku": {"type": "string"}}}},
			"$defs": {"address": {"type": "object", "properties": {"iban": {"type": "string"}}}}}`,
		"common.json": `{"$defs": {"address": {"type": "object", "properties": {"zip": {"type": "string"}}}}}`,
		"user.json":   `{"type": "object", "properties": {"type": {"enum": ["bot", "human"]}}, "required": ["type"]}`,
		"a.avsc":      `{"type": "record", "name": "A", "fields": [{"name": "address", "type": {"type": "record", "name": "Address", "namespace": "com.a", "fields": [{"name": "x", "type": "int"}]}}]}`,
		"b.avsc":      `{"type": "record", "name": "B", "fields": [{"name": "address", "type": {"type": "record", "name": "Address", "namespace": "com.b", "fields": [{"name": "y", "type": "int"}]}}]}`,
		"new.json":    `{"type": "object", "properties": {"to": {"$ref": "common.json#/$defs/address"}}, "$defs": {"address": {"type": "object"}}}`,
		"c.avsc":      `{"type": "record", "name": "C", "fields": [{"name": "address", "type": {"type": "record", "name": "Address", "namespace": "com.c", "fields": [{"name": "z", "type": "int"}]}}]}`,
	}
	msg := map[string]string{
		"Shipping": "  Shipping: {type: s, schema: shipping.json}\n",
		"Billing":  "  Billing: {type: b, schema: billing.json}\n",
		"User":     "  User: {type: u, schema: user.json}\n",
		"A":        "  A: {type: a, schema: a.avsc}\n",
		"B":        "  B: {type: bb, schema: b.avsc}\n",
		"New":      "  New: {type: n, schema: new.json}\n",
		"C":        "  C: {type: c, schema: c.avsc}\n",
	}
	names := func(order ...string) map[string]string {
		t.Helper()
		src := "version: 1\npackage: p\nmessages:\n"
		for _, o := range order {
			src += msg[o]
		}
		m, err := build(t, src, files)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, ty := range m.Types.Types {
			key := ty.Origin
			if key == "#" { // a root: named by its message
				key = "root " + ty.Name
			}
			out["type "+key] = ty.Name
			for _, f := range ty.Fields {
				out["field "+key+" "+f.WireName] = f.GoName
			}
			for _, v := range ty.Values {
				out["const "+key+" "+v.Value] = v.GoName
			}
		}
		for _, mm := range m.Messages {
			out["message "+mm.Name] = mm.GoName + " " + mm.TypeFunc + " " + mm.VarName
		}
		return out
	}
	base := names("Shipping", "Billing", "User", "A", "B")
	for _, want := range []struct{ key, name string }{
		{"type shipping.json #/$defs/address", "ShippingAddress"},
		{"type billing.json #/$defs/address", "BillingAddress"},
		{"type common.json #/$defs/address", "CommonAddress"},
		{"type billing.json #/properties/line", "BillingLine"},
		{"type user.json #/properties/type", "UserType"},
		{"const user.json #/properties/type bot", "UserTypeBot"},
		{"type record com.a.Address", "Address"},
		{"type record com.b.Address", "ComBAddress"},
		{"message User", "User TypeOfUser userType"},
	} {
		if got := base[want.key]; got != want.name {
			t.Errorf("%s is named %q, want %q", want.key, got, want.name)
		}
	}
	for _, order := range [][]string{
		{"B", "A", "User", "Billing", "Shipping"},
		{"New", "User", "Billing", "C", "Shipping", "A", "B"},
		{"Shipping", "Billing", "User", "A", "B", "New", "C"},
	} {
		got := names(order...)
		for k, v := range base {
			if got[k] != v {
				t.Errorf("messages %v: %s is named %q, was %q", order, k, got[k], v)
			}
		}
	}
}

// field_go_names renames a field by its pointer, in JSON Schema and Avro,
// nested too, and is checked as every go_name is.
func TestFieldGoNames(t *testing.T) {
	files := map[string]string{
		"a.json": `{"type": "object", "properties": {"order_id": {"type": "string"}, "to": {"$ref": "#/$defs/address"}, "ref": {"type": "string"}},
			"$defs": {"address": {"type": "object", "properties": {"zip": {"type": "string"}}}}}`,
		"b.avsc": `{"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"},
			{"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [{"name": "sku", "type": "string"}]}}}]}`,
	}
	m, err := build(t, `version: 1
package: p
messages:
  A:
    type: a
    schema: a.json
    field_go_names: {"#/properties/order_id": Key, "#/$defs/address/properties/zip": PostCode}
  B:
    type: b
    schema: b.avsc
    field_go_names: {"#/fields/0": Ex, "#/fields/1/type/items/fields/0": Article}
`, files)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ty := range m.Types.Types {
		for _, f := range ty.Fields {
			got[ty.Name+"."+f.WireName] = f.GoName
		}
	}
	for k, v := range map[string]string{"A.order_id": "Key", "AAddress.zip": "PostCode", "A.ref": "Ref", "B.x": "Ex", "Line.sku": "Article", "B.lines": "Lines"} {
		if got[k] != v {
			t.Errorf("%s is %q, want %q (all: %v)", k, got[k], v, got)
		}
	}

	for _, c := range []struct{ name, entry, want string }{
		{"clash", `{"#/properties/order_id": Ref}`, `field_go_names gives the field "order_id" the Go name Ref, which another field of its struct takes; choose another`},
		{"no field", `{"#/properties/nope": Nope}`, `acemq.yaml:7:22: message "A": field_go_names "#/properties/nope": a.json has no field there`},
		{"not exported", `{"#/properties/ref": lower}`, `acemq.yaml:7:42: message "A": field_go_names "#/properties/ref": go_name "lower" is not exported`},
	} {
		_, err := build(t, "version: 1\npackage: p\nmessages:\n  A:\n    type: a\n    schema: a.json\n    field_go_names: "+c.entry+"\n", files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

// A schema: given as an absolute path keeps its relative $refs: the
// referenced file is found beside it, mapped and bundled.
func TestAbsoluteSchemaPathWithRelativeRef(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"s/order.json": `{"type": "object", "properties": {"total": {"$ref": "money.json"}}, "required": ["total"]}`,
		"s/money.json": `{"type": "object", "properties": {"cents": {"type": "integer"}}}`,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.ToSlash(filepath.Join(dir, "s", "order.json"))
	m, err := build(t, "version: 1\npackage: p\nmessages:\n  Order: {type: o, schema: \""+abs+"\"}\n", nil)
	if err != nil {
		t.Fatalf("an absolute schema path with a relative $ref: %v", err)
	}
	if f := m.Messages[0].Root.Fields[0]; f.GoName != "Total" || f.Type.Named == nil || f.Type.Named.Name != "Money" {
		t.Errorf("field %+v; want Total of type Money", f)
	}
	if !strings.Contains(m.Messages[0].SchemaText, `"cents"`) {
		t.Errorf("money.json is not bundled into the schema text:\n%s", m.Messages[0].SchemaText)
	}
}
