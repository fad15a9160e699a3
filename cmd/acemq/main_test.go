package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/cli"
	"github.com/acemq/acemq-go/internal/brokertest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
	"github.com/hamba/avro/v2"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"acemq": func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar against the broker: the command
// as an operator runs it. Each script gets its own queue prefix $Q
// (deleted at the end) and ACEMQ_URL.
func TestScripts(t *testing.T) {
	url := brokertest.Require(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			q := brokertest.Name("cli")
			env.Setenv("Q", q)
			env.Setenv("ACEMQ_URL", url)
			env.Setenv("ACEMQ_MGMT_URL", brokertest.MgmtURL())
			env.Defer(func() {
				brokertest.DeleteQueues(t, q)
				deleteExchange(q + ".ex")
				deleteExchange(q + ".legacy")
				brokertest.DeleteQueues(t, q+"-elsewhere")
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":      cmdExits,
			"declare":    cmdDeclare,
			"deadletter": cmdDeadLetter,
			"fill":       cmdFill,
			"depth":      cmdDepth,
			"expand":     cmdExpand,
			"header":     cmdHeader,
			"reject":     cmdReject,
			"bind":       cmdBind,
			"avro":       cmdAvro,
		},
	})
}

// exits N PROGRAM ARGS...: run PROGRAM and check its exit status is N.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func channel(ts *testscript.TestScript) (*amqp.Connection, *amqp.Channel) {
	conn, err := amqp.Dial(brokertest.URL())
	ts.Check(err)
	ch, err := conn.Channel()
	ts.Check(err)
	return conn, ch
}

// declare QUEUE [KEY=VALUE...]: a durable queue with string arguments
// (a value that is a number is sent as one).
func cmdDeclare(ts *testscript.TestScript, neg bool, args []string) {
	conn, ch := channel(ts)
	defer conn.Close()
	tbl := amqp.Table{}
	for _, kv := range args[1:] {
		k, v, _ := strings.Cut(kv, "=")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			tbl[k] = n
		} else {
			tbl[k] = v
		}
	}
	if len(tbl) == 0 {
		tbl = nil
	}
	_, err := ch.QueueDeclare(args[0], true, false, false, false, tbl)
	ts.Check(err)
}

// deadletter QUEUE ID FROM ATTEMPT TYPE REASON [BODY] [HEADER=VALUE...]:
// publish a dead letter as the consumer writes one.
func cmdDeadLetter(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 6 {
		ts.Fatalf("usage: deadletter queue id from attempt type reason [body] [header=value...]")
	}
	attempt, err := strconv.Atoi(args[3])
	ts.Check(err)
	body := `{"order_id":"` + args[1] + `"}`
	h := amqp.Table{
		wire.HeaderID: args[1], wire.HeaderAttempt: int64(attempt), wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z",
		wire.HeaderOrigin: "shop@host", wire.HeaderError: args[5], wire.HeaderQueue: args[2],
	}
	if args[5] == "" {
		delete(h, wire.HeaderError)
		delete(h, wire.HeaderQueue)
	}
	for i, a := range args[6:] {
		if k, v, ok := strings.Cut(a, "="); ok {
			h[k] = v
		} else if i == 0 {
			body = a
		}
	}
	publish(ts, args[0], amqp.Publishing{MessageId: args[1], Type: args[4], ContentType: "application/json",
		DeliveryMode: amqp.Persistent, Headers: h, Body: []byte(body)})
}

func publish(ts *testscript.TestScript, queue string, msgs ...amqp.Publishing) {
	conn, ch := channel(ts)
	defer conn.Close()
	ts.Check(ch.Confirm(false))
	var dcs []*amqp.DeferredConfirmation
	for _, m := range msgs {
		dc, err := ch.PublishWithDeferredConfirm("", queue, true, false, m)
		ts.Check(err)
		dcs = append(dcs, dc)
	}
	for _, dc := range dcs {
		if !dc.Wait() {
			ts.Fatalf("publish to %s: nacked", queue)
		}
	}
}

// fill QUEUE FROM N: N dead letters from FROM, ids m-00000...
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		id := fmt.Sprintf("m-%05d", i)
		msgs[i] = amqp.Publishing{MessageId: id, Type: "order.placed.v2", ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{wire.HeaderID: id, wire.HeaderAttempt: int64(4), wire.HeaderQueue: args[1],
				wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z",
				wire.HeaderError:     "gave up after 4 attempts: the warehouse is not answering"},
			Body: []byte(`{"order_id":"` + id + `"}`)}
	}
	publish(ts, args[0], msgs...)
}

// avro QUEUE ID SCHEMA VALUE [REGISTRYDIR|carry]: publish a dead letter
// whose body is VALUE (a JSON file, read as the Avro schema SCHEMA says) in
// the Avro wire format as the runtime's codec writes it: with the schema's
// own id (registry.SchemaID), or the id a directory registry gives it; with
// carry, the schema's own id and the schema in x-acemq-schema, as Publish
// writes it with no shared registry.
func cmdAvro(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 {
		ts.Fatalf("usage: avro queue id schema value [registrydir]")
	}
	text := ts.ReadFile(args[2])
	var doc any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[3])), &doc))
	var reg runtime.SchemaRegistry = registry.NewFingerprint()
	carry := len(args) > 4 && args[4] == "carry"
	if len(args) > 4 && !carry {
		dir, err := registry.NewDirectory(ts.MkAbs(args[4]))
		ts.Check(err)
		reg = dir
	}
	codec, err := runtime.NewAvroCodec(reg, "order.placed", text)
	ts.Check(err)
	body, err := codec.Encode(context.Background(), avroValue(avro.MustParse(text), doc))
	ts.Check(err)
	print, err := registry.SchemaFingerprint(text)
	ts.Check(err)
	headers := amqp.Table{wire.HeaderID: args[1], wire.HeaderAttempt: int64(5),
		wire.HeaderFirstSeen: "2026-11-30T09:00:00.000Z", wire.HeaderSchemaFingerprint: print,
		wire.HeaderError: "gave up after 5 attempts: the warehouse said no", wire.HeaderQueue: strings.TrimSuffix(args[0], ".dlq")}
	if carry {
		headers[wire.HeaderSchema] = avro.MustParse(text).String()
	}
	publish(ts, args[0], amqp.Publishing{MessageId: args[1], Type: "order.placed.v2", ContentType: wire.ContentTypeAvro,
		DeliveryMode: amqp.Persistent, Body: body, Headers: headers})
}

// avroValue is a JSON value as hamba encodes it with schema s: ints and
// longs from numbers, timestamp-millis from RFC 3339, a union's value as
// its first non-null branch takes it.
func avroValue(s avro.Schema, v any) any {
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, out := v.(map[string]any), map[string]any{}
		for _, f := range s.Fields() {
			out[f.Name()] = avroValue(f.Type(), m[f.Name()])
		}
		return out
	case *avro.ArraySchema:
		a, out := v.([]any), []any{}
		for _, x := range a {
			out = append(out, avroValue(s.Items(), x))
		}
		return out
	case *avro.RefSchema:
		return avroValue(s.Schema(), v)
	case *avro.UnionSchema:
		if v == nil {
			return nil
		}
		for _, t := range s.Types() {
			if t.Type() != avro.Null {
				return avroValue(t, v)
			}
		}
	case *avro.PrimitiveSchema:
		if l := s.Logical(); l != nil && l.Type() == avro.TimestampMillis {
			t, _ := time.Parse(time.RFC3339, v.(string))
			return t
		}
		switch s.Type() {
		case avro.Int:
			return int(v.(float64))
		case avro.Long:
			return int64(v.(float64))
		}
	}
	return v
}

// depth QUEUE N: the queue holds N ready messages.
func cmdDepth(ts *testscript.TestScript, neg bool, args []string) {
	conn, ch := channel(ts)
	defer conn.Close()
	q, err := ch.QueueDeclarePassive(args[0], false, false, false, false, nil)
	ts.Check(err)
	if strconv.Itoa(q.Messages) != args[1] {
		ts.Fatalf("%s holds %d messages, want %s", args[0], q.Messages, args[1])
	}
}

// header QUEUE KEY VALUE: the first message of QUEUE has header KEY =
// VALUE (compared as text; "absent" for none); the message stays.
func cmdHeader(ts *testscript.TestScript, neg bool, args []string) {
	conn, ch := channel(ts)
	defer conn.Close()
	d, ok, err := ch.Get(args[0], false)
	ts.Check(err)
	if !ok {
		ts.Fatalf("%s is empty", args[0])
	}
	defer d.Nack(false, true)
	got := "absent"
	if v, ok := d.Headers[args[1]]; ok {
		got = fmt.Sprint(v)
	}
	if got != args[2] {
		ts.Fatalf("%s: header %s is %s, want %s", args[0], args[1], got, args[2])
	}
}

// reject QUEUE: take the first message of QUEUE and reject it without
// requeue, so that the broker dead-letters it (x-death) as a consumer
// outside the library would make it.
func cmdReject(ts *testscript.TestScript, neg bool, args []string) {
	conn, ch := channel(ts)
	defer conn.Close()
	d, ok, err := ch.Get(args[0], false)
	ts.Check(err)
	if !ok {
		ts.Fatalf("%s is empty", args[0])
	}
	ts.Check(d.Reject(false))
}

// bind QUEUE EXCHANGE KEY: declare EXCHANGE (direct, durable) and bind
// QUEUE to it with KEY.
func cmdBind(ts *testscript.TestScript, neg bool, args []string) {
	conn, ch := channel(ts)
	defer conn.Close()
	ts.Check(ch.ExchangeDeclare(args[1], amqp.ExchangeDirect, true, false, false, false, nil))
	ts.Check(ch.QueueBind(args[0], args[2], args[1], false, nil))
}

// expand FILE: replace $VARS in FILE with the script's environment.
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, []byte(os.Expand(string(data), ts.Getenv)), 0o644))
}

func deleteExchange(name string) {
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		_ = ch.ExchangeDelete(name, false, false)
	}
}

// A summary of 10,000 dead letters reads them all and leaves them all in
// place, in their order. (How long it takes is logged, not asserted: the
// machine is shared; a bar is drawn only on a terminal.)
func TestSummaryTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	brokertest.Require(t)
	q := brokertest.Queue(t, "cli-10k")
	conn, err := amqp.Dial(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	dlq := wire.DeadLetterQueue(q)
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	const n = 10_000
	var dcs []*amqp.DeferredConfirmation
	for i := range n {
		why := "gave up after 4 attempts: the warehouse is not answering"
		if i%10 == 0 {
			why = "rejected by the handler: no customer id"
		}
		dc, err := ch.PublishWithDeferredConfirm("", dlq, true, false, amqp.Publishing{Type: "order.placed.v2",
			Headers: amqp.Table{wire.HeaderID: fmt.Sprintf("m-%05d", i), wire.HeaderError: why}, Body: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
		dcs = append(dcs, dc)
	}
	for _, dc := range dcs {
		if !dc.Wait() {
			t.Fatal("nacked")
		}
	}
	var stdout, stderr strings.Builder
	start := time.Now()
	if code := cli.Main([]string{"--url", brokertest.URL(), "dlq", "summary", q}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	t.Logf("summary of %d dead letters in %s", n, time.Since(start))
	for _, want := range []string{
		`(?m)^9000 +- +- +gave up after 4 attempts: the warehouse is not answering$`,
		`(?m)^1000 +- +- +rejected by the handler: no customer id$`,
		`(?m)^10000 messages in ` + regexp.QuoteMeta(dlq) + `, 2 groups; all left in place$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout.String()) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
	msgs, err := ch.Consume(dlq, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		select {
		case m := <-msgs:
			if id := m.Headers[wire.HeaderID]; id != fmt.Sprintf("m-%05d", i) {
				t.Fatalf("message %d after the summary is %v: the order changed", i, id)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d messages left after the summary", i, n)
		}
	}
}
