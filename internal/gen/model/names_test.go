package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/schema"
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
// reordered or added: a name comes from where its type is defined, never
// from the other messages. An Avro type is named after its message, so
// an added message whose Avro file defines an existing type's short name,
// or its full name, gets a type of its own. An added message whose type
// would take a name an existing one has (a file's name, a message's own
// name) fails the generation, naming both; it never renames the existing
// type. The added messages sort first and last by Go name, as the order in
// which messages are mapped follows it.
func TestNamesStable(t *testing.T) {
	files := map[string]string{
		"shipping.json": `{"type": "object", "properties": {"to": {"$ref": "#/$defs/address"}, "common": {"$ref": "common.json#/$defs/address"}},
			"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}}}`,
		"billing.json": `{"type": "object", "properties": {"to": {"$ref": "#/$defs/address"}, "line": {"type": "object", "properties": {"sku": {"type": "string"}}}},
			"$defs": {"address": {"type": "object", "properties": {"iban": {"type": "string"}}}}}`,
		"common.json":         `{"$defs": {"address": {"type": "object", "properties": {"zip": {"type": "string"}}}}}`,
		"common/address.json": `{"type": "object", "properties": {"city": {"type": "string"}}}`,
		"other/address.json":  `{"type": "object", "properties": {"town": {"type": "string"}}}`,
		"refund.json":         `{"type": "object", "properties": {"type": {"enum": ["full", "part"]}, "to": {"$ref": "common/address.json"}}, "required": ["type"]}`,
		"user.json":           `{"type": "object", "properties": {"type": {"enum": ["bot", "human"]}}, "required": ["type"]}`,
		"a.avsc":              `{"type": "record", "name": "A", "fields": [{"name": "at", "type": {"type": "record", "name": "Point", "namespace": "com.a", "fields": [{"name": "x", "type": "int"}]}}]}`,
		"paid.avsc": `{"type": "record", "name": "Paid", "namespace": "com.acme", "fields": [{"name": "method", "type": {"type": "enum", "name": "Method", "symbols": ["CARD", "SMS_2"]}},
			{"name": "b", "type": {"type": "record", "name": "Card", "namespace": "com.b", "fields": [{"name": "y", "type": "int"}]}},
			{"name": "c", "type": {"type": "record", "name": "Card", "namespace": "com.c", "fields": [{"name": "z", "type": "int"}]}}]}`,
		// Added, without a clash: their own $defs and shared types.
		"new.json":  `{"type": "object", "properties": {"to": {"$ref": "common.json#/$defs/address"}, "at": {"$ref": "common/address.json"}}, "$defs": {"address": {"type": "object"}}}`,
		"same.avsc": `{"type": "record", "name": "Same", "fields": [{"name": "m", "type": {"type": "enum", "name": "Method", "namespace": "com.acme", "symbols": ["CARD", "SMS_2"]}}]}`,
		// Added, each with a type that would take an existing name.
		"other.json":  `{"type": "object", "properties": {"to": {"$ref": "other/address.json"}}}`,
		"method.json": `{"type": "object", "properties": {"n": {"type": "integer"}}}`,
		"zoo.avsc":    `{"type": "record", "name": "Zoo", "namespace": "com.zoo", "fields": [{"name": "m", "type": {"type": "enum", "name": "Method", "symbols": ["CASH"]}}]}`,
	}
	msg := map[string]string{
		"Shipping": "Shipping: {type: s, schema: shipping.json}",
		"Billing":  "Billing: {type: b, schema: billing.json}",
		"User":     "User: {type: u, schema: user.json}",
		"Refund":   "Refund: {type: r, schema: refund.json}",
		"A":        "A: {type: a, schema: a.avsc}",
		"Paid":     "Paid: {type: p, schema: paid.avsc}",
		// No clash, first and last.
		"Aaa": "Aaa: {type: aaa, schema: new.json}",
		"Zzz": "Zzz: {type: zzz, schema: new.json}",
		"Aas": "Aas: {type: aas, schema: same.avsc}",
		"Zzs": "Zzs: {type: zzs, schema: same.avsc}",
		// An Avro type of an existing type's short name (and full name,
		// in same.avsc), named after its own message.
		"Azoo":   "Azoo: {type: az, schema: zoo.avsc}",
		"Zzoo":   "Zzoo: {type: zz, schema: zoo.avsc}",
		"Method": "Method: {type: me, schema: method.json}",
		// (1) a $ref to another file of the same name.
		"Aother": "Aother: {type: ao, schema: other.json}",
		"Zother": "Zother: {type: zo, schema: other.json}",
		// (2) a message named as an existing nested type.
		"RefundType":   "RefundType: {type: rt, schema: user.json}",
		"Aa":           "Aa: {type: aa, schema: user.json, go_name: RefundType}",
		"PaidMethod":   "PaidMethod: {type: pm, schema: user.json}",
		"Ab":           "Ab: {type: ab, schema: user.json, go_name: PaidMethod}",
		"AddressOwner": "Address: {type: ad, schema: user.json}",
		// (3) a message whose schema is a file another message $refs.
		"Acommon": "Acommon: {type: ac, schema: common/address.json}",
		"Zcommon": "Zcommon: {type: zc, schema: common/address.json}",
		"Afixed":  "Acommon: {type: ac, schema: common/address.json, go_name: Address}",
	}
	buildWith := func(extra string, order ...string) (map[string]string, error) {
		t.Helper()
		src := "version: 1\npackage: p\nmessages:\n"
		for _, o := range order {
			src += "  " + msg[o] + "\n"
		}
		src += extra
		m, err := build(t, src, files)
		if err != nil {
			return nil, err
		}
		// Each type is keyed by its origin and the message whose schema
		// reaches it: two messages' Avro files each define com.acme.Method.
		out := map[string]string{}
		for _, mm := range m.Messages {
			seen := map[*schema.Type]bool{}
			var walk func(ty *schema.Type)
			var walkRef func(r *schema.TypeRef)
			walkRef = func(r *schema.TypeRef) {
				for ; r != nil; r = r.Elem {
					if r.Named != nil {
						walk(r.Named)
					}
				}
			}
			walk = func(ty *schema.Type) {
				if seen[ty] {
					return
				}
				seen[ty] = true
				key := ty.Origin + " in " + mm.Name
				if m.Types.Roots[ty.Name] == ty || ty.Origin == "#" {
					key = "root " + ty.Name
				}
				out["type "+key] = ty.Name
				for _, f := range ty.Fields {
					out["field "+key+" "+f.WireName] = f.GoName
					walkRef(f.Type)
				}
				for _, v := range ty.Values {
					out["const "+key+" "+v.Value] = v.GoName
				}
				walkRef(ty.Target)
			}
			walk(mm.Root)
		}
		for _, mm := range m.Messages {
			out["message "+mm.Name] = mm.GoName + " " + mm.TypeFunc + " " + mm.VarName
		}
		return out, nil
	}
	build := func(order ...string) (map[string]string, error) { t.Helper(); return buildWith("", order...) }
	baseOrder := []string{"Shipping", "Billing", "User", "Refund", "A", "Paid"}
	base, err := build(baseOrder...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ key, name string }{
		{"type shipping.json #/$defs/address in Shipping", "ShippingAddress"},
		{"type billing.json #/$defs/address in Billing", "BillingAddress"},
		{"type common.json #/$defs/address in Shipping", "CommonAddress"},
		{"type common/address.json # in Refund", "Address"},
		{"type billing.json #/properties/line in Billing", "BillingLine"},
		{"type user.json #/properties/type in User", "UserType"},
		{"const user.json #/properties/type in User bot", "UserTypeBot"},
		{"type refund.json #/properties/type in Refund", "RefundType"},
		{"type record com.a.Point in A", "APoint"},
		{"type enum com.acme.Method in Paid", "PaidMethod"},
		{"const enum com.acme.Method in Paid SMS_2", "PaidMethodSms2"},
		{"type record com.b.Card in Paid", "PaidCard"},
		{"type record com.c.Card in Paid", "PaidComCCard"}, // its file has com.b.Card first
		{"message User", "User TypeOfUser userType"},
	} {
		if got := base[want.key]; got != want.name {
			t.Errorf("%s is named %q, want %q", want.key, got, want.name)
		}
	}

	// Reordered, or with messages added that take no existing name: every
	// name stays.
	for _, order := range [][]string{
		{"Paid", "A", "Refund", "User", "Billing", "Shipping"},
		{"Aaa", "Aas", "Azoo", "Shipping", "Billing", "User", "Refund", "A", "Paid", "Method", "Zzz", "Zzs", "Zzoo"},
		{"Zzs", "Paid", "Zzoo", "Zzz", "User", "Aaa", "Billing", "A", "Method", "Shipping", "Refund", "Azoo", "Aas"},
	} {
		got, err := build(order...)
		if err != nil {
			t.Errorf("messages %v: %v", order, err)
			continue
		}
		if len(order) > len(baseOrder) {
			for k, v := range map[string]string{"type enum com.zoo.Method in Azoo": "AzooMethod", "type enum com.zoo.Method in Zzoo": "ZzooMethod",
				"type enum com.acme.Method in Aas": "AasMethod", "const enum com.acme.Method in Zzs SMS_2": "ZzsMethodSms2"} {
				if got[k] != v {
					t.Errorf("messages %v: %s is named %q, want %q", order, k, got[k], v)
				}
			}
		}
		for k, v := range base {
			if got[k] != v {
				t.Errorf("messages %v: %s is named %q, was %q", order, k, got[k], v)
			}
		}
	}

	// Added messages with a type that takes an existing name: an error at
	// the entry, naming both, whether the message comes first or last (in
	// the manifest and by Go name); never a rename.
	const (
		other = `acemq.yaml:{add}:3: message "{name}": the schema at # in other/address.json becomes the Go name Address, which the schema at # in common/address.json ` +
			`(from message "Refund", acemq.yaml:{Refund}:3) has too; name it otherwise in type_go_names, e.g. type_go_names: {"other/address.json#": OtherAddress}`
		paidMethod = `acemq.yaml:{Paid}:3: message "Paid": the Avro enum com.acme.Method becomes the Go name PaidMethod, which message "{name}" (acemq.yaml:{add}:3) has too; ` +
			`name one of them otherwise: type_go_names: {"com.acme.Method": ComAcmeMethod}, or a go_name for message "{name}"`
		refundType = `acemq.yaml:{Refund}:3: message "Refund": the schema at #/properties/type in refund.json becomes the Go name RefundType, which message "{name}" ` +
			`(acemq.yaml:{add}:3) has too; name one of them otherwise: type_go_names: {"refund.json#/properties/type": RefundPropertiesType}, or a go_name for message "{name}"`
	)
	const owned = `acemq.yaml:{Refund}:29: message "Refund": refund.json:1:86: #/properties/to/$ref: common/address.json is the schema of message "{name}", whose Go name {name} is not the file's name Address, ` +
		`so the types this $ref reaches would change names as messages with that file come and go; give message "{name}" go_name: Address, or $ref a file that is no message's schema`
	for _, c := range []struct{ add, want string }{
		{"Aother", other}, {"Zother", other}, {"RefundType", refundType}, {"Aa", refundType},
		{"PaidMethod", paidMethod}, {"Ab", paidMethod},
		{"AddressOwner", `acemq.yaml:{Refund}:3: message "Refund": the schema at # in common/address.json becomes the Go name Address, which message "Address" (acemq.yaml:{add}:3) has too; ` +
			`name one of them otherwise: type_go_names: {"common/address.json#": CommonAddressType}, or a go_name for message "Address"`},
		{"Acommon", owned}, {"Zcommon", owned},
	} {
		for _, first := range []bool{true, false} {
			order := append(slices.Clone(baseOrder), c.add)
			if first {
				order = append([]string{c.add}, baseOrder...)
			}
			_, err := build(order...)
			want := strings.NewReplacer("{add}", strconv.Itoa(4+slices.Index(order, c.add)), "{name}", strings.TrimSuffix(c.add, "Owner"),
				"{Refund}", strconv.Itoa(4+slices.Index(order, "Refund")), "{Paid}", strconv.Itoa(4+slices.Index(order, "Paid"))).Replace(c.want)
			if fmt.Sprint(err) != want {
				t.Errorf("%s added (first: %v): error\n%v\nwant\n%s", c.add, first, err, want)
			}
		}
	}

	// The suggested type_go_names entry settles the clash; every existing
	// name stays.
	for _, c := range []struct{ add, entry, key, want string }{
		{"Aother", `"other/address.json#": OtherAddress`, "type other/address.json # in Aother", "OtherAddress"},
	} {
		got, err := buildWith("type_go_names: {"+c.entry+"}\n", append([]string{c.add}, baseOrder...)...)
		if err != nil {
			t.Errorf("%s with %s: %v", c.add, c.entry, err)
			continue
		}
		if got[c.key] != c.want {
			t.Errorf("%s with %s: %s is %q, want %q", c.add, c.entry, c.key, got[c.key], c.want)
		}
		for k, v := range base {
			if got[k] != v {
				t.Errorf("%s with %s: %s is named %q, was %q", c.add, c.entry, k, got[k], v)
			}
		}
	}

	// The suggested go_name settles (4): the $ref keeps the type Address,
	// now the message's.
	got, err := build(append([]string{"Afixed"}, baseOrder...)...)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range base {
		k = strings.Replace(k, "common/address.json # in Refund", "root Address", 1)
		if got[k] != v {
			t.Errorf("Acommon with go_name Address: %s is named %q, was %q", k, got[k], v)
		}
	}
}

// type_go_names entries are checked: an exported identifier, a type at the
// key, one entry per type, no clash.
func TestTypeGoNamesErrors(t *testing.T) {
	files := map[string]string{
		"a.json":              `{"type": "object", "properties": {"to": {"$ref": "common/address.json"}, "line": {"type": "object", "properties": {"n": {"type": "integer"}}}}}`,
		"common/address.json": `{"type": "object", "properties": {"city": {"type": "string"}}}`,
		"b.avsc":              `{"type": "record", "name": "B", "fields": [{"name": "m", "type": {"type": "enum", "name": "Method", "namespace": "com.acme", "symbols": ["X"]}}]}`,
	}
	const msgs = "messages:\n  A: {type: a, schema: a.json}\n  B: {type: b, schema: b.avsc}\nqueues:\n  orders: {}\npublishers:\n  orders: {messages: {A: {routing_key: orders}}}\n"
	m, err := build(t, "version: 1\npackage: p\n"+msgs+`type_go_names: {"./common/../common/address.json#": Place, "com.acme.Method": PayMethod, "a.json#/properties/line": Row}`+"\n", files)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, ty := range m.Types.Types {
		got[ty.Name] = true
	}
	for _, n := range []string{"Place", "PayMethod", "Row", "A", "B"} {
		if !got[n] {
			t.Errorf("no type %s (types: %v)", n, got)
		}
	}
	for _, c := range []struct{ name, entries, want string }{
		{"lower case", `{"com.acme.Method": method}`, `acemq.yaml:10:36: type_go_names "com.acme.Method": go_name "method" is not exported: start it with an upper-case letter`},
		{"nothing there", `{"a.json#/properties/nope": Nope}`, `acemq.yaml:10:17: type_go_names "a.json#/properties/nope": no message's schema has a type there (a key is <schema path>#<JSON pointer>, ` +
			`like common/address.json# or schemas/refund.json#/$defs/line, or an Avro full name, like com.acme.Method; a message's own type is named by its go_name)`},
		{"a message's own type", `{"a.json#": Whole}`, `acemq.yaml:10:17: type_go_names "a.json#": no message's schema has a type there`},
		{"twice", `{"common/address.json#": P, "./common/address.json#": Q}`, `acemq.yaml:10:44: type_go_names "./common/address.json#" names the type of "common/address.json#" (acemq.yaml:10:17) again; keep one of them`},
		{"a message's name", `{"com.acme.Method": A}`, `acemq.yaml:10:36: type_go_names "com.acme.Method": the Avro enum com.acme.Method becomes the Go name A, which message "A" (acemq.yaml:4:3) has too; choose another`},
		{"a publisher's name", `{"com.acme.Method": OrdersPublisher}`, `acemq.yaml:10:36: type_go_names "com.acme.Method": the Avro enum com.acme.Method becomes the Go name OrdersPublisher, which publisher "orders" (acemq.yaml:9:3) has too; choose another`},
		{"two entries, one name", `{"com.acme.Method": Same, "a.json#/properties/line": Same}`, `acemq.yaml:10:36: type_go_names "com.acme.Method": the Avro enum com.acme.Method becomes the Go name Same, which the schema at #/properties/line in a.json (from message "A", acemq.yaml:4:3) has too; choose another`},
	} {
		_, err := build(t, "version: 1\npackage: p\n"+msgs+"type_go_names: "+c.entries+"\n", files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error\n%v\nwant it to contain\n%s", c.name, err, c.want)
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
	for k, v := range map[string]string{"A.order_id": "Key", "AAddress.zip": "PostCode", "A.ref": "Ref", "B.x": "Ex", "BLine.sku": "Article", "B.lines": "Lines"} {
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
