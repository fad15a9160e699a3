package model

import "testing"

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
