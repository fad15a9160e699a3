package ui

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/runtime"
)

type refund struct {
	RefundID string    `avro:"refund_id"`
	Amount   *big.Rat  `avro:"amount"`
	Reason   *string   `avro:"reason"`
	At       time.Time `avro:"at"`
	Kind     string    `avro:"kind"`
}

var refundType = runtime.NewAvroType[refund]("refund.v1", "refund", refundSchema)

// An Avro dead letter: its body shown as JSON through the manifest's
// schema; an edit checked against that schema at its field, and a valid
// one encoded with it and decoded by the consumer.
func TestConsoleAvro(t *testing.T) {
	s := newShop(t)
	refunds := s.q + ".refunds"
	got := make(chan *runtime.Message[refund], 10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cons, err := runtime.Consume(ctx, s.conn, runtime.ConsumerSpec{Queue: refunds, Routes: []runtime.Route{runtime.Handle(refundType,
		func(_ context.Context, m *runtime.Message[refund]) runtime.Ack {
			if m.Payload.Reason == nil {
				return runtime.Reject(fmt.Errorf("refund %s has no reason", m.Payload.RefundID))
			}
			got <- m
			return runtime.Accept()
		})}})
	must(t, err)
	t.Cleanup(func() { _ = cons.Close(context.Background()) })
	at := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	must(t, runtime.Publish(ctx, s.conn, refundType, "", refund{RefundID: "R-1", Amount: big.NewRat(1250, 100), At: at, Kind: "FULL"},
		runtime.WithRoutingKey(refunds), runtime.WithMessageID("R-1")))
	s.waitDepth(refunds+".dlq", 1)
	s.serve(true)
	s.waitPass()
	c := s.client()
	c.signIn(testToken)

	_, out, _ := c.do("GET", "/api/messages?by=reason&group="+urlq("rejected by the handler: refund # has no reason"), nil)
	rows, _ := out["messages"].([]any)
	if len(rows) != 1 {
		t.Fatalf("the refund's group: %v", out)
	}
	row := rows[0].(map[string]any)
	code, v, raw := c.do("GET", fmt.Sprintf("/api/message?source=%s&pos=%v&key=%s", urlq(refunds+".dlq"), row["pos"], row["key"]), nil)
	if code != 200 {
		t.Fatalf("open: %d %s", code, raw)
	}
	body := v["body"].(map[string]any)
	text, _ := body["text"].(string)
	want := "{\n  \"refund_id\": \"R-1\",\n  \"amount\": 12.50,\n  \"reason\": null,\n  \"at\": \"2026-11-30T09:15:00Z\",\n  \"kind\": \"FULL\"\n}"
	if body["format"] != "avro" || text != want || !strings.Contains(fmt.Sprint(body["schema"]), "acemq.yaml: Refund") {
		t.Fatalf("the Avro body: %v\n%s", body, text)
	}

	edit := func(body string) (int, map[string]any) {
		code, out, _ := c.do("POST", "/api/edit", map[string]any{"source": row["source"], "pos": row["pos"], "key": row["key"], "body": body})
		return code, out
	}
	for bad, loc := range map[string]string{
		strings.Replace(want, `"FULL"`, `"HALF"`, 1):                  "/kind",
		strings.Replace(want, `12.50`, `"twelve"`, 1):                 "/amount",
		strings.Replace(want, `"2026-11-30T09:15:00Z"`, `"today"`, 1): "/at",
		strings.Replace(want, `null`, `7`, 1):                         "/reason",
		strings.Replace(want, `"refund_id": "R-1",`, ``, 1):           "/refund_id",
	} {
		code, out := edit(bad)
		vs, _ := out["violations"].([]any)
		if code != http.StatusUnprocessableEntity || len(vs) != 1 || vs[0].(map[string]any)["location"] != loc {
			t.Errorf("edit %s: %d %v", loc, code, out)
		}
	}
	select {
	case m := <-got:
		t.Fatalf("an invalid edit reached the consumer: %+v", m)
	case <-time.After(300 * time.Millisecond):
	}
	code, out = edit(strings.Replace(want, `null`, `"duplicate charge"`, 1))
	if code != 200 {
		t.Fatalf("a valid edit: %d %v", code, out)
	}
	select {
	case m := <-got:
		p := m.Payload
		if m.Envelope.ID != "R-1" || p.Reason == nil || *p.Reason != "duplicate charge" || p.Amount.Cmp(big.NewRat(25, 2)) != 0 ||
			!p.At.Equal(at) || p.Kind != "FULL" || m.Envelope.Attempt != 1 {
			t.Errorf("the consumer got %+v (reason %v)", m, p.Reason)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the edited refund did not reach the consumer")
	}
	s.waitDepth(refunds+".dlq", 0)
}
