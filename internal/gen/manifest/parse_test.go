package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const good = `version: 1
package: orders
policies:
  standard:
    exponential: {attempts: 5, initial: 1s, max: 60s}
    give_up_after: 10m
messages:
  OrderPlaced:
    type: order.placed.v2
    schema: schemas/order_placed.avsc
    subject: orders
exchanges:
  orders: {type: topic}
queues:
  orders.new:
    type: quorum
    dead_letter: true
    retry: standard
    bindings: [{exchange: orders, routing_key: order.created}]
    consumes: [OrderPlaced]
    arguments: {x-max-length: 1000}
publishers:
  Orders:
    exchange: orders
    messages: {OrderPlaced: {routing_key: order.created}}
`

func TestParseKeepsOrderAndPositions(t *testing.T) {
	f, err := Parse("acemq.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Package.Value != "orders" || f.Version.Value != 1 {
		t.Fatalf("package %q version %d", f.Package.Value, f.Version.Value)
	}
	q := f.Queues[0]
	if q.Name.Value != "orders.new" || q.Name.Pos != (Pos{15, 3}) {
		t.Errorf("queue %q at %v, want orders.new at 15:3", q.Name.Value, q.Name.Pos)
	}
	if q.Consumes[0].Value != "OrderPlaced" || q.Consumes[0].Pos != (Pos{20, 16}) {
		t.Errorf("consumes %v", q.Consumes)
	}
	if q.Arguments[0].Key.Value != "x-max-length" || q.Arguments[0].Value != int64(1000) {
		t.Errorf("arguments %v", q.Arguments[0])
	}
	if p := f.Policies[0]; p.Exponential.Attempts.Value != 5 || p.GiveUpAfter.Value != "10m" {
		t.Errorf("policy %+v", p)
	}
	if m := f.Messages[0]; m.Compat != nil {
		t.Errorf("compat %v, want nil when absent", m.Compat)
	}
	if pm := f.Publishers[0].Messages[0]; pm.RoutingKey.Value != "order.created" {
		t.Errorf("publisher message %+v", pm)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, edit, with string
		want             []string
	}{
		{"unknown key", "    retry: standard", "    retyr: standard",
			[]string{`acemq.yaml:18:5: queue "orders.new": unknown key "retyr" (did you mean "retry"?)`}},
		{"bad duration", "give_up_after: 10m", "give_up_after: 10 minutes",
			[]string{`acemq.yaml:6:20: policy "standard": give_up_after "10 minutes" is not a duration: write a number and a unit, like 500ms, 30s, 10m or 1h`}},
		{"bare number duration", "give_up_after: 10m", "give_up_after: 8",
			[]string{`acemq.yaml:6:20: policy "standard": give_up_after 8 is a number, not a duration: write it with a unit, like 8s (or 8ms)`}},
		{"enum", "type: quorum", "type: quorom",
			[]string{`acemq.yaml:16:11: queue "orders.new": type "quorom" is not one of classic, quorum (did you mean "quorum"?)`}},
		{"type", "dead_letter: true", "dead_letter: yes please",
			[]string{`acemq.yaml:17:18: queue "orders.new": dead_letter must be true or false, not a string`}},
		{"missing", "    schema: schemas/order_placed.avsc\n", "",
			[]string{`acemq.yaml:8:3: message "OrderPlaced" is missing "schema"`}},
		{"argument", "x-max-length", "max-length",
			[]string{`acemq.yaml:21:17: queue "orders.new": argument "max-length" is not an x-argument: queue arguments start with x- (e.g. x-max-length)`}},
		{"two at once", "routing_key: order.created}]", "routing_kye: order.created}]\n    requeue: true",
			[]string{
				`acemq.yaml:19:35: queue "orders.new": unknown key "routing_kye" in bindings[0] (did you mean "routing_key"?)`,
				`acemq.yaml:20:5: queue "orders.new": unknown key "requeue"; known keys: arguments, bindings, consumes, dead_letter, delivery_limit, go_name, inbox, reply, requeue_on_failure, retry, retry_in_broker, rungs, type`,
			}},
		{"duplicate", "  OrderPlaced:\n", "  OrderPlaced: {type: x, schema: y.json}\n  OrderPlaced:\n",
			[]string{`acemq.yaml:9:3: duplicate key "OrderPlaced" (first at line 8); keep one`}},
		{"nested unknown key", "messages: {OrderPlaced: {routing_key: order.created}}", "messages: {OrderPlaced: {routingkey: order.created}}",
			[]string{`acemq.yaml:25:30: publisher "Orders": unknown key "routingkey" in messages.OrderPlaced (did you mean "routing_key"?)`}},
		{"compat", "    subject: orders\n", "    subject: orders\n    compat: backwards\n",
			[]string{`acemq.yaml:12:13: message "OrderPlaced": compat "backwards" is not one of full, backward, forward, none (did you mean "backward"?)`}},
		{"inbox key", "    retry: standard", "    retry: standard\n    inbox: {retension: 72h}",
			[]string{`acemq.yaml:19:13: queue "orders.new": unknown key "retension" in inbox (did you mean "retention"?)`}},
		{"inbox duration", "    retry: standard", "    retry: standard\n    inbox: {retention: 3 days}",
			[]string{`acemq.yaml:19:24: queue "orders.new": inbox.retention "3 days" is not a duration: write a number and a unit, like 500ms, 30s, 10m or 1h`}},
		{"version", "version: 1", "version: 2", []string{`acemq.yaml:1:10: version must be 1, not 2`}},
		{"alias cycle", "exchanges:\n  orders: {type: topic}", "exchanges:\n  orders: &x {type: topic, more: *x}",
			[]string{`acemq.yaml:13:34: this alias refers to a value that contains it; write the value out`}},
		{"syntax", "messages:\n", "messages:\n\t", []string{"acemq.yaml:8: YAML syntax error near this line: found character that cannot start any token; a tab, @ or ` cannot start a value: indent with spaces, and quote a value that starts with @ or `"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(good, c.edit, c.with, 1)
			_, err := Parse("acemq.yaml", []byte(src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %v, want Errors", err)
			}
			if got := err.Error(); got != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"OrderPlacd", "OrderPlaced"}, {"orderplaced", "OrderPlaced"}, {"Shipped", ""},
	} {
		if got := Closest(c.name, []string{"OrderCancelled", "OrderPlaced"}); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	// A longer word for a key (retries for retry) is its shared prefix.
	keys := []string{"arguments", "bindings", "consumes", "dead_letter", "delivery_limit", "retry", "rungs", "type"}
	for _, c := range []struct{ name, want string }{
		{"retries", "retry"}, {"bindingz", "bindings"}, {"deadletter", "dead_letter"}, {"rest", ""}, {"delivery", ""},
	} {
		if got := Closest(c.name, keys); got != c.want {
			t.Errorf("Closest(%q, queue keys) = %q, want %q", c.name, got, c.want)
		}
	}
}

// An error stays on one line whatever value it quotes.
func TestErrorIsOneLine(t *testing.T) {
	e := &Error{File: "acemq.yaml", Pos: Pos{Line: 3, Col: 5}, Msg: "message \"a\": schema x\n*/ y: bad\tthing"}
	if got, want := e.Error(), `acemq.yaml:3:5: message "a": schema x\n*/ y: bad\tthing`; got != want {
		t.Errorf("Error() = %s\nwant %s", got, want)
	}
}

// A second YAML document would be ignored: it is refused at its ---.
func TestSecondDocumentRefused(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"version: 1\npackage: p\n---\nmessages: {}\n", "acemq.yaml:3: a second YAML document (---) starts here"},
		{"---\nversion: 1\npackage: p\n--- # more\nmessages: {}\n", "acemq.yaml:4: a second YAML document (---) starts here"},
		{"version: 1\npackage: p\n---\n", "acemq.yaml:3: a second YAML document (---) starts here"},
	} {
		_, err := Parse("acemq.yaml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s...", c.src, err, c.want)
		}
	}
	for _, src := range []string{"---\nversion: 1\npackage: p\n", "version: 1\npackage: p\n...\n", "version: 1\npackage: p\nx: |\n  ---\n"} {
		if _, err := Parse("acemq.yaml", []byte(src)); err != nil && strings.Contains(err.Error(), "second YAML document") {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// A YAML syntax error is reported at the line of the problem, not where
// the YAML library says (the start of the enclosing block), with a hint.
func TestYAMLSyntaxErrorLine(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"bad indent", "version: 1\npackage: p\nmessages:\n  A:\n    type: a.v1\n   schema: a.json\n",
			"acemq.yaml:6: YAML syntax error near this line: did not find expected key; check the indentation"},
		{"unclosed {", "version: 1\npackage: p\nqueues: {q: {consumes: [A]}\nmessages:\n  A: {type: a, schema: a.json}\n",
			"acemq.yaml:3: YAML syntax error near this line: did not find expected ',' or '}'; close the {"},
		{"unclosed [", "version: 1\npackage: p\nqueues:\n  q:\n    consumes: [A\nmessages:\n  A: {type: a, schema: a.json}\n",
			"acemq.yaml:5: YAML syntax error near this line: did not find expected ',' or ']'; close the ["},
		{"unclosed quote", "version: 1\npackage: p\nmessages:\n  A:\n    type: \"a.v1\n    schema: a.json\n",
			"acemq.yaml:5: YAML syntax error near this line: found unexpected end of stream; close the quoted string"},
		// The first entry of a block sets its column: when it is the one
		// out of step, it is the line reported, not the next.
		{"first entry indented too little", "version: 1\npackage: p\nmessages:\n  A:\n   type: a.v1\n    schema: a.json\nqueues: {}\n",
			"acemq.yaml:5: YAML syntax error near this line: mapping values are not allowed in this context; check the indentation"},
		{"first entry indented too much", "version: 1\npackage: p\nmessages:\n  A:\n     type: a.v1\n    schema: a.json\nqueues: {}\n",
			"acemq.yaml:5: YAML syntax error near this line: did not find expected key; check the indentation"},
		{"first list item out of step", "version: 1\npackage: p\nqueues:\n  q: {}\nexports:\n - {format: dot, path: t.dot}\n  - {format: dot, path: u.dot}\n",
			"acemq.yaml:6: YAML syntax error near this line:"},
		{"a valid multi-line list before the error", "version: 1\npackage: p\nqueues:\n  q:\n    consumes: [A,\n      B]\n  r:\n    x: 1\n   y: 2\n",
			"acemq.yaml:9: YAML syntax error near this line: did not find expected key"},
	} {
		_, err := Parse("acemq.yaml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s...", c.name, err, c.want)
		}
	}
}

// compat: is read into the message.
func TestParseCompat(t *testing.T) {
	src := strings.Replace(good, "    subject: orders\n", "    subject: orders\n    compat: forward\n", 1)
	f, err := Parse("acemq.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c := f.Messages[0].Compat; c == nil || c.Value != "forward" || c.Pos != (Pos{12, 13}) {
		t.Errorf("compat %+v, want forward at 12:13", c)
	}
}

// NaN and infinity are YAML floats JSON cannot hold: said so, with a hint.
func TestNotFiniteNumber(t *testing.T) {
	for _, v := range []string{".nan", ".inf", "-.Inf"} {
		src := "version: 1\npackage: p\npolicies: {i: {fixed: {attempts: 3, delay: 1s, jitter: " + v + "}}}\n"
		_, err := Parse("acemq.yaml", []byte(src))
		want := `acemq.yaml:3:56: policy "i": fixed.jitter ` + v + ` is not a number JSON can hold (NaN or infinity); write a finite number, like 0.2`
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v\nwant %s", v, err, want)
		}
	}
}

// A value that is not one of an enum's lists the values once, not as
// "known keys" too.
func TestEnumMessage(t *testing.T) {
	src := "version: 1\npackage: p\nqueues:\n  s: {type: !!int 5}\n"
	_, err := Parse("acemq.yaml", []byte(src))
	if want := `acemq.yaml:4:13: queue "s": type 5 is not one of classic, quorum`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// The node limit is for what aliases add: a large manifest written out
// plainly is not refused, an alias bomb is.
func TestNodeLimitCountsAliases(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\npackage: p\nqueues:\n  q:\n    arguments:\n")
	for i := range 110_000 {
		fmt.Fprintf(&b, "      x-a%d: %d\n", i, i)
	}
	if _, err := Parse("acemq.yaml", []byte(b.String())); err != nil {
		t.Errorf("a plain manifest of 220000 values: %.300v", err)
	}

	bomb := "version: 1\npackage: p\nx0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
	for i := 1; i < 7; i++ {
		bomb += fmt.Sprintf("x%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	_, err := Parse("acemq.yaml", []byte(bomb))
	if err == nil || !strings.Contains(err.Error(), "its aliases expand the manifest by more than 100000 values; write it out plainly, or use fewer aliases") {
		t.Errorf("alias bomb: %.300v", err)
	}
}
