package model

import (
	"github.com/acemq/acemq-go/runtime/wire"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/internal/gen/manifest"
)

func TestGoName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"orders.new", "OrdersNew"}, {"order-placed", "OrderPlaced"}, {"OrderPlaced", "OrderPlaced"},
		{"type", "Type"}, {"2fa-code", "X2faCode"}, {"café-crème", "CaféCrème"}, {"订单", "X订单"},
		{"golden.names.select-1", "GoldenNamesSelect1"}, {"__x__", "X"}, {"a..b", "AB"}, {"...", ""}, {"\xff", ""},
		{"order_id", "OrderID"}, {"html_url", "HTMLURL"},
	} {
		if got := nameRules(nil).GoName(c.in); got != c.want {
			t.Errorf("GoName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// build parses and builds a manifest written in a temporary directory with
// the given schema files.
func build(t *testing.T, src string, files map[string]string) (*Model, error) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := manifest.Parse("acemq.yaml", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return buildDir(t, f, dir)
}

const object = `{"type": "object", "properties": {"id": {"type": "string"}}}`

func TestPolicies(t *testing.T) {
	m, err := build(t, `version: 1
package: p
policies:
  standard:
    exponential: {attempts: 6, initial: 10s, max: 300s, multiplier: 2, jitter: 0.1}
    give_up_after: 1h
  quick:
    fixed: {attempts: 3, delay: 1s}
    wait_in_broker_from: 0s
  slow:
    fixed: {attempts: 3, delay: 2m}
    go_name: Slowly
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	std, quick, slow := m.Policies[0], m.Policies[1], m.Policies[2]
	if std.GoName != "StandardPolicy" || *std.Multiplier != 2 || *std.Jitter != 0.1 || std.GiveUpAfter != time.Hour {
		t.Errorf("standard: %+v", std)
	}
	if got := wire.BrokerRungs(wire.Waits(std.Value.Attempts(), std.Value.Delay), std.Value.WaitInBrokerFrom()); !slices.Equal(got, []time.Duration{40 * time.Second, 80 * time.Second, 160 * time.Second}) {
		t.Errorf("standard rungs %v", got)
	}
	if quick.Kind != Fixed || quick.WaitInBrokerFrom == nil || *quick.WaitInBrokerFrom != 0 || len(wire.BrokerRungs(wire.Waits(quick.Value.Attempts(), quick.Value.Delay), quick.Value.WaitInBrokerFrom())) != 0 {
		t.Errorf("quick: %+v rungs %v", quick, wire.BrokerRungs(wire.Waits(quick.Value.Attempts(), quick.Value.Delay), quick.Value.WaitInBrokerFrom()))
	}
	if slow.GoName != "Slowly" || !slices.Equal(wire.BrokerRungs(wire.Waits(slow.Value.Attempts(), slow.Value.Delay), slow.Value.WaitInBrokerFrom()), []time.Duration{2 * time.Minute}) {
		t.Errorf("slow: %+v", slow)
	}
}

func TestErrors(t *testing.T) {
	files := map[string]string{"a.json": object, "b.avsc": `{"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]}`}
	for _, c := range []struct{ name, src, want string }{
		{"neither shape", "policies:\n  p: {give_up_after: 1m}\n",
			`acemq.yaml:4:3: policy "p" needs exponential: {attempts, initial, max} or fixed: {attempts, delay}`},
		{"both shapes", "policies:\n  p: {exponential: {attempts: 2, initial: 1s, max: 1s}, fixed: {attempts: 2, delay: 1s}}\n",
			`has both exponential: and fixed:; keep one`},
		{"max below initial", "policies:\n  p: {exponential: {attempts: 2, initial: 10s, max: 1s}}\n",
			`acemq.yaml:4:53: policy "p": max 1s is below initial 10s; make max at least initial`},
		{"json subject", "messages:\n  A: {type: a, schema: a.json, subject: s}\n",
			`acemq.yaml:4:41: message "A": subject is for Avro messages (a registry subject); remove it`},
		{"same type", "messages:\n  A: {type: a, schema: a.json}\n  B: {type: a, schema: b.avsc}\n",
			`acemq.yaml:5:13: message "B" has the type "a" of message "A" (acemq.yaml:4:3); a consumer dispatches on the type, so give each message its own`},
		{"keyword package", "", `acemq.yaml:2:10: package "func" is a Go keyword; choose another package name`},
		{"schema constants that lower-casing makes equal", "messages:\n  Kelvin: {type: a, schema: a.json}\n  \"\\u212Aelvin\": {type: b, schema: a.json}\n",
			"acemq.yaml:5:3: message \"\u212Aelvin\" (its message type variable) and message \"Kelvin\" (its message type variable) (acemq.yaml:4:3) both become the Go name kelvinType; set go_name on one of them"},
		{"check func and a message type variable", "messages:\n  RefundType: {type: a, schema: a.json}\n  B: {type: b, schema: a.json, go_name: AcemqCheckRefund}\n",
			`acemq.yaml:5:3: message "B" (its message type variable) and message "RefundType" (its check func) (acemq.yaml:4:3) both become the Go name acemqCheckRefundType; set go_name on one of them`},
		{"decode shape func and a message type variable", "messages:\n  RefundType: {type: a, schema: a.json}\n  B: {type: b, schema: a.json, go_name: AcemqShapeRefund}\n",
			`acemq.yaml:5:3: message "B" (its message type variable) and message "RefundType" (its decode shape func) (acemq.yaml:4:3) both become the Go name acemqShapeRefundType; set go_name on one of them`},
		{"schema error in a file a schema refers to", "messages:\n  A: {type: a, schema: r.json}\n",
			`acemq.yaml:4:24: message "A": sub/c.json:1:33: #/minLength: must be at least 0, got the number -1`},
		{"give_up_after zero", "policies:\n  p:\n    fixed: {attempts: 2, delay: 1s}\n    give_up_after: 0s\n",
			`acemq.yaml:6:20: policy "p": give_up_after 0s is no age limit to the runtime (its zero), not "give up at once"; remove give_up_after for no limit`},
		{"rung not whole seconds", "policies:\n  p: {fixed: {attempts: 3, delay: 1500ms}, wait_in_broker_from: 1s}\n",
			`acemq.yaml:4:7: policy "p": the broker wait 1.5s is not a whole number of seconds (rungs are named <queue>.retry.<N>s); use whole-second delays, or a wait_in_broker_from above it`},
		{"rung not whole seconds above 15m", "policies:\n  p: {fixed: {attempts: 3, delay: 20m500ms}}\n",
			`acemq.yaml:4:7: policy "p": the broker wait 20m0.5s is not a whole number of seconds (rungs are named <queue>.retry.<N>s); use whole-second delays (initial, max and multiplier such that every wait from 15m on is whole seconds)`},
		{"blank package", "", `acemq.yaml:2:10: package "_" is the blank identifier, which cannot name a package; choose another package name`},
		{"bad go_name", "messages:\n  A: {type: a, schema: a.json, go_name: lower}\n",
			`acemq.yaml:4:41: message "A": go_name "lower" is not exported: start it with an upper-case letter`},
		{"managed argument", "queues:\n  q: {arguments: {x-queue-type: quorum}}\n",
			`acemq.yaml:4:19: queue "q": argument x-queue-type is set by the topology; write type: classic or quorum instead`},
		{"dlq name", "queues:\n  q: {}\n  q.dlq: {}\n",
			`acemq.yaml:5:3: queue "q.dlq" is the dlq queue the topology declares for queue "q"; remove it (or rename it)`},
		{"reserved exchange", "exchanges:\n  amq.topic: {type: topic}\n",
			`acemq.yaml:4:3: exchange "amq.topic": names starting with amq. are reserved by RabbitMQ; choose another`},
		{"default exchange needs a queue", "messages:\n  A: {type: a, schema: a.json}\nqueues:\n  orders: {}\npublishers:\n  P: {messages: {A: {routing_key: order}}}\n",
			`acemq.yaml:8:35: publisher "P" publishes A through the default exchange to the queue "order", which no queue declares (did you mean "orders"?)`},
		{"not JSON", "messages:\n  A: {type: a, schema: broken.json}\n",
			`acemq.yaml:4:24: message "A": broken.json:1:13 is not JSON: invalid character '}' looking for beginning of object key string`},
		{"outbox name taken", "messages:\n  A: {type: a, schema: a.json}\n  OrdersOutbox: {type: b, schema: a.json}\nqueues:\n  q: {}\npublishers:\n  Orders: {messages: {A: {routing_key: q}}, outbox: true}\n",
			`acemq.yaml:9:53: publisher "Orders" (its outbox) and message "OrdersOutbox"`},
		{"inbox retention zero", "queues:\n  q: {inbox: {retention: 0s}}\n",
			`acemq.yaml:4:26: queue "q": inbox retention "0s" must be positive`},
		{"schema error", "messages:\n  A: {type: a, schema: any.json}\n",
			`acemq.yaml:4:24: message "A": any.json:1:49: #/properties/x/$ref: `},
	} {
		t.Run(c.name, func(t *testing.T) {
			pkg := "p"
			switch c.name {
			case "keyword package":
				pkg = "func"
			case "blank package":
				pkg = "_"
			}
			fs := map[string]string{"broken.json": `{"type": 1, }`, "any.json": `{"type": "object", "properties": {"x": {"$ref": "missing.json"}}}`,
				"r.json": `{"type": "object", "properties": {"x": {"$ref": "sub/c.json"}}}`, "sub/c.json": `{"type": "string", "minLength": -1}`}
			for k, v := range files {
				fs[k] = v
			}
			_, err := build(t, "version: 1\npackage: "+pkg+"\n"+c.src, fs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, c.want)
			}
		})
	}
}

// TestPolicyAttemptsOutOfRange: an attempts the manifest check refuses is
// reported once, and the runtime's arithmetic is not run on it (it walks
// the schedule: a huge value hung or panicked, and a value just above the
// limit gave further errors of its own).
func TestPolicyAttemptsOutOfRange(t *testing.T) {
	for _, c := range []struct{ policy, want string }{
		{"fixed: {attempts: 9223372036854775807, delay: 1s}",
			`acemq.yaml:5:23: policy "i": fixed.attempts 9223372036854775807 is out of range; write 1 (no retry) to 1000`},
		{"exponential: {attempts: 1000000000, initial: 1s, max: 10m, multiplier: 1.0000001}",
			`acemq.yaml:5:29: policy "i": exponential.attempts 1000000000 is out of range; write 1 (no retry) to 1000`},
		{"fixed: {attempts: 1001, delay: 1500ms}\n    wait_in_broker_from: 1s",
			`acemq.yaml:5:23: policy "i": fixed.attempts 1001 is out of range; write 1 (no retry) to 1000`},
		{"fixed: {attempts: 0, delay: 1500ms}\n    wait_in_broker_from: 1s",
			`acemq.yaml:5:23: policy "i": fixed.attempts 0 is out of range; write 1 (no retry) to 1000`},
	} {
		src := "version: 1\npackage: p\npolicies:\n  i:\n    " + c.policy + "\n"
		f, shapeErr := manifest.Parse("acemq.yaml", []byte(src))
		if f == nil || shapeErr == nil {
			t.Fatalf("%s: the manifest check should refuse it: %v", c.policy, shapeErr)
		}
		_, err := buildDir(t, f, t.TempDir())
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.policy, err, c.want)
		}
	}
}

// An integer argument that does not fit in 32 bits stays int64.
func TestArgumentWidth(t *testing.T) {
	m, err := build(t, "version: 1\npackage: p\nqueues:\n  q:\n    arguments: {x-max-length: 1000, x-max-length-bytes: 9223372036854775807, x-expires: -2147483649}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, a := range m.Queues[0].Arguments {
		got[a.Key] = a.Value
	}
	if got["x-max-length"] != 1000 || got["x-max-length-bytes"] != int64(9223372036854775807) || got["x-expires"] != int64(-2147483649) {
		t.Errorf("arguments %#v", got)
	}
}

// A quorum queue gets an explicit delivery limit and a dead-letter target
// whether or not the manifest writes them; a classic queue gets neither.
func TestQuorumDefaults(t *testing.T) {
	m, err := build(t, "version: 1\npackage: p\nqueues:\n  q:\n    type: quorum\n  r:\n    type: quorum\n    delivery_limit: 7\n  c: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		limit int
		dl    bool
	}{{wire.DefaultDeliveryLimit, true}, {7, true}, {0, false}} {
		if q := m.Queues[i]; q.DeliveryLimit != want.limit || q.DeadLetter != want.dl {
			t.Errorf("queue %s: DeliveryLimit %d DeadLetter %v, want %d %v", q.Name, q.DeliveryLimit, q.DeadLetter, want.limit, want.dl)
		}
	}
}

// An absolute $ref to another schema file of the manifest, by its $id, is
// bundled like a relative one (the runtime loads nothing); one that no
// schema file of the manifest has is refused.
func TestAbsoluteRefBundled(t *testing.T) {
	files := map[string]string{
		"a.json": `{"$id": "https://e.com/a.json", "type": "object", "properties": {"x": {"type": "string"}}}`,
		"b.json": `{"type": "object", "properties": {"a": {"$ref": "https://e.com/a.json"}, "x": {"$ref": "https://e.com/a.json#/properties/x"}}}`,
		"c.json": `{"type": "object", "properties": {"a": {"$ref": "https://e.com/other.json"}}}`,
	}
	m, err := build(t, "version: 1\npackage: p\nmessages:\n  A: {type: a, schema: a.json}\n  B: {type: b, schema: b.json}\n", files)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Messages[1].SchemaText; !strings.Contains(got, "\n    \"acemq-bundle:a.json\": {\n      \"$id\": \"https://e.com/a.json\",\n") {
		t.Errorf("b.json is not bundled with a.json: %s", got)
	}
	_, err = build(t, "version: 1\npackage: p\nmessages:\n  C: {type: c, schema: c.json}\n", files)
	if err == nil || !strings.Contains(err.Error(), `acemq.yaml:4:24: message "C": c.json:1:49: #/properties/a/$ref: $ref "https://e.com/other.json": https://e.com/other.json is not one of the manifest's schema files`) {
		t.Errorf("got %v", err)
	}
}

// compat: is full unless the manifest says otherwise.
func TestMessageCompat(t *testing.T) {
	m, err := build(t, "version: 1\npackage: p\nmessages:\n  A: {type: a, schema: a.json}\n  B: {type: b, schema: a.json, compat: backward}\n  C: {type: c, schema: a.json, compat: none}\n",
		map[string]string{"a.json": object})
	if err != nil {
		t.Fatal(err)
	}
	var got []CompatMode
	for _, msg := range m.Messages {
		got = append(got, msg.Compat)
	}
	if want := []CompatMode{CompatFull, CompatBackward, CompatNone}; !slices.Equal(got, want) {
		t.Errorf("compat %v, want %v", got, want)
	}
}

// TestOutbox: outbox: true names the publisher's outbox writer and a Tx
// method per message; without it there is neither.
func TestOutbox(t *testing.T) {
	m, err := build(t, `version: 1
package: p
messages:
  OrderPlaced: {type: a, schema: a.json}
  Order: {type: b, schema: a.json}
queues:
  q: {}
publishers:
  Orders:
    messages: {OrderPlaced: {routing_key: q}, Order: {routing_key: q}}
    outbox: true
  Plain:
    messages: {Order: {routing_key: q}}
`, map[string]string{"a.json": object})
	if err != nil {
		t.Fatal(err)
	}
	orders, plain := m.Publishers[0], m.Publishers[1]
	if !m.HasOutbox() || !orders.Outbox || orders.OutboxName != "OrdersOutbox" || orders.NewOutboxName != "NewOrdersOutbox" ||
		orders.Messages[0].TxName != "PublishOrderPlacedTx" || orders.Messages[1].TxName != "PublishOrderTx" {
		t.Errorf("Orders: %+v, messages %+v %+v", orders, orders.Messages[0], orders.Messages[1])
	}
	if plain.Outbox || plain.OutboxName != "" || plain.Messages[0].TxName != "" {
		t.Errorf("Plain: %+v", plain)
	}
}

// retry_in_broker: native on a quorum queue whose policy the broker's
// delay gives exactly (fixed, or linear: Exponential(3, 1s, 2s) without
// jitter) is a NativeRetry queue whose consumers requeue; everything else
// is an error at its file:line:col saying what to change.
func TestRetryInBrokerNative(t *testing.T) {
	m, err := build(t, `version: 1
package: p
policies:
  fixed: {fixed: {attempts: 4, delay: 45s}}
  linear: {exponential: {attempts: 3, initial: 1s, max: 2s, jitter: 0}}
queues:
  a: {type: quorum, retry: fixed, retry_in_broker: native}
  b: {type: quorum, retry: linear, retry_in_broker: native, delivery_limit: 3}
  c: {type: quorum, retry: fixed, retry_in_broker: rungs}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} {
		if q := m.Queues[i]; q.NativeRetry != want || q.RequeueOnFailure != want {
			t.Errorf("queue %s: NativeRetry %v RequeueOnFailure %v, want %v", q.Name, q.NativeRetry, q.RequeueOnFailure, want)
		}
	}
	_, err = build(t, `version: 1
package: p
policies:
  standard: {exponential: {attempts: 5, initial: 1s, max: 60s, jitter: 0}}
  jittery: {fixed: {attempts: 3, delay: 1s, jitter: 0.1}}
  fixed: {fixed: {attempts: 8, delay: 1s}}
queues:
  classic: {retry: fixed, retry_in_broker: native}
  none: {type: quorum, retry_in_broker: native}
  exp: {type: quorum, retry: standard, retry_in_broker: native}
  jit: {type: quorum, retry: jittery, retry_in_broker: native}
  rung: {type: quorum, retry: fixed, retry_in_broker: native, rungs: {type: quorum}}
  off: {type: quorum, retry: fixed, retry_in_broker: native, requeue_on_failure: false}
  limit: {type: quorum, retry: fixed, retry_in_broker: native, delivery_limit: 5}
  limit2: {type: quorum, retry: fixed, retry_in_broker: native}
`, nil)
	want := []string{
		`acemq.yaml:8:44: queue "classic": retry_in_broker: native is a quorum queue's (RabbitMQ 4.3's delayed retry, x-delayed-retry-*); write type: quorum, or remove retry_in_broker (rungs)`,
		`acemq.yaml:9:41: queue "none": retry_in_broker: native delays the waits of a retry policy, and the queue names none; add retry: <policy>, or remove retry_in_broker`,
		`acemq.yaml:10:57: queue "exp": retry_in_broker: native cannot give policy "standard" (acemq.yaml:4:14) exactly: retry policy: waits [1s 2s 4s 8s]: the broker's delay is min(min × failures, max), 3s after failure 3, not 4s; native retry gives a fixed or linear ladder only (keep the rungs for this one)`,
		`acemq.yaml:11:56: queue "jit": retry_in_broker: native cannot give policy "jittery" (acemq.yaml:5:13) exactly: retry policy: jitter 0.1: the broker's delay has none; write jitter 0 for native retry, or keep the rungs`,
		`acemq.yaml:12:63: queue "rung": retry_in_broker: native declares no rungs; remove rungs:`,
		`acemq.yaml:13:82: queue "off": retry_in_broker: native requeues each failure for the queue to delay it; remove requeue_on_failure: false`,
		`acemq.yaml:14:80: queue "limit": retry_in_broker: native makes each of policy "fixed"'s 8 attempts a delivery the broker counts, but the delivery limit is 5`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no error\n%s\nin\n%s", w, got)
		}
	}
	if strings.Contains(got, `"limit2"`) {
		t.Errorf("limit2 (8 attempts, the default limit 50) refused:\n%s", got)
	}
}
