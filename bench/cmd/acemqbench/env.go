package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"log/slog"
	"os"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	"github.com/acemq/acemq-go/runtime"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The queues of bench/orders/acemq.yaml, plus watermill's own.
const (
	queueJSON      = "bench.json"
	queueAvro      = "bench.avro"
	queueR1        = "bench.r1"
	queueQAvro     = "bench.q.avro"
	queueInbox     = "bench.inbox"
	queueQR1       = "bench.q.r1"
	queueWatermill = "bench.watermill"
)

// env is what every run shares: the runtime's connection, a raw one, the
// bodies of the current size and the raw side's copy of what the runtime
// puts on the wire.
type env struct {
	url  string
	conn *runtime.Connection
	raw  *amqp.Connection
	ch   *amqp.Channel // purges, declares

	size string // "1k" or "100"
	// jsonValue and avroValue are the payloads of the current size; wire
	// holds, per format, a message the runtime published, which the raw
	// side sends as it is (new ids each time).
	jsonValue orders.OrderJSON
	avroValue orders.OrderAvro
	wire      map[string]amqp.Publishing
	// holdBudget is R1's consumer's hold budget; below 0 the runtime's
	// default.
	holdBudget int
	// ackSlack is R1's consumer's ack slack; below 0 the runtime's
	// default.
	ackSlack int
	// pg is the outbox cases' database; nil without --pg (they are
	// skipped).
	pg *pgEnv
	// publisher is the generated publisher on conn.
	publisher *orders.BenchPublisher
	// priceValue is RR1's request (the JSON order as a PriceOrder);
	// requestWire and replyWire what the raw requester and the responder
	// send (request.go).
	priceValue             orders.PriceOrder
	requestWire, replyWire amqp.Publishing
	// latencies are the round trips of the last RR1 run, each request's
	// from its send to its reply (request.go).
	latencies []time.Duration
	// costStart is the process's cost when the current run's timed part
	// began (clockStart).
	costStart cost
	// profile is the file the current run's timed part is profiled to
	// (--cpuprofile-a; "" not profiled), profiling the open one.
	profile    string
	profiling  *os.File
	profileErr error // starting it failed
}

func setup(ctx context.Context, url string, holdBudget, ackSlack int) (*env, error) {
	e := &env{url: url, holdBudget: holdBudget, ackSlack: ackSlack}
	var err error
	// The runtime's outcome log at Warn: R1's retries would fill the
	// terminal at Info, and the logging would be timed with them.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if e.conn, err = runtime.Dial(ctx, url, runtime.WithLogger(log)); err != nil {
		return nil, err
	}
	e.publisher = orders.NewBenchPublisher(e.conn)
	if err := e.conn.Declare(ctx, orders.Topology()); err != nil {
		e.close()
		return nil, err
	}
	if e.raw, err = amqp.Dial(url); err != nil {
		e.close()
		return nil, fmt.Errorf("raw dial: %w", err)
	}
	if e.ch, err = e.raw.Channel(); err != nil {
		e.close()
		return nil, fmt.Errorf("raw channel: %w", err)
	}
	// watermill's queue, declared as its NewDurableQueueConfig does.
	if _, err := e.ch.QueueDeclare(queueWatermill, true, false, false, false, nil); err != nil {
		e.close()
		return nil, fmt.Errorf("declare %s: %w", queueWatermill, err)
	}
	return e, nil
}

func (e *env) close() {
	if e.pg != nil {
		e.pg.close()
	}
	if e.raw != nil {
		_ = e.raw.Close()
	}
	if e.conn != nil {
		_ = e.conn.Close(context.Background())
	}
}

// setSize builds the payloads of size and takes the wire form of each from
// a real publish through the generated publisher.
func (e *env) setSize(ctx context.Context, size string) error {
	e.size = size
	e.jsonValue, e.avroValue = orders.Values(size)
	if err := e.purge(); err != nil {
		return err
	}
	p := orders.NewBenchPublisher(e.conn)
	if err := p.PublishOrderJSON(ctx, e.jsonValue); err != nil {
		return err
	}
	if err := p.PublishOrderAvro(ctx, e.avroValue); err != nil {
		return err
	}
	e.wire = map[string]amqp.Publishing{}
	for format, q := range map[string]string{"json": queueJSON, "avro": queueAvro} {
		var d *runtime.Delivery
		var err error
		for range 50 {
			if d, err = e.conn.Pull(ctx, q); err == nil && d != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if d == nil {
			return fmt.Errorf("pull the %s template from %s: %v", format, q, err)
		}
		e.wire[format] = amqp.Publishing{
			ContentType: d.ContentType, Type: d.Type, DeliveryMode: amqp.Persistent,
			Headers: amqp.Table(d.Headers), Body: d.Body,
		}
		if err := d.Ack(ctx); err != nil {
			return err
		}
	}
	return e.setRequestWire()
}

// bodyBytes is the size of the case's body on the wire.
func (e *env) bodyBytes(c benchCase) int { return len(e.wire[bodyOf(c.format)].Body) }

// rawMessage is the runtime's wire message for format with a fresh id.
func (e *env) rawMessage(format string) amqp.Publishing {
	p := e.wire[bodyOf(format)]
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	p.MessageId = hex.EncodeToString(id)
	p.Timestamp = time.Now()
	h := make(amqp.Table, len(p.Headers))
	for k, v := range p.Headers {
		h[k] = v
	}
	h[wire.HeaderID] = p.MessageId
	p.Headers = h
	return p
}

func (e *env) queueOf(format string) string { return queueOf(format) }

// The formats a case carries: "avro" and "json" go through the generated
// code to bench.avro and bench.json; "jsonref" is the JSON body through the
// runtime alone (orders.ReferenceOrderJSONType: the reference validator
// alone) to bench.json; "qavro" is the Avro body to the quorum queue bench.q.avro.
const (
	formatJSONRef    = "jsonref"
	formatAvroQuorum = "qavro"
)

// bodyOf is the body format ("avro" or "json") format carries.
func bodyOf(format string) string {
	switch format {
	case formatJSONRef:
		return "json"
	case formatAvroQuorum:
		return "avro"
	}
	return format
}

// queueOf is the queue the bench exchange routes format's messages to.
func queueOf(format string) string {
	switch format {
	case "avro":
		return queueAvro
	case formatAvroQuorum:
		return queueQAvro
	}
	return queueJSON
}

// routingKey is the key the bench exchange routes format's queue by.
func routingKey(format string) string {
	if format == formatJSONRef {
		return "json"
	}
	return format
}

// purge empties every queue a run fills, the R1 queues' rungs, dead-letter
// and parked queues included.
func (e *env) purge() error {
	qs := []string{queueJSON, queueAvro, queueQAvro, queueInbox, queueWatermill, queueRequests}
	for _, r1 := range []string{queueR1, queueQR1} {
		qs = append(qs, r1, wire.RungQueue(r1, time.Second), wire.DeadLetterQueue(r1), wire.ParkedQueue(r1))
	}
	for _, q := range qs {
		if _, err := e.ch.QueuePurge(q, false); err != nil {
			return fmt.Errorf("purge %s: %w", q, err)
		}
	}
	return nil
}

// fill puts n messages of format in its queue with the runtime's PublishBatch
// (not timed).
func (e *env) fill(ctx context.Context, format string, n int) error {
	const batch = 256
	for done := 0; done < n; done += batch {
		if err := e.publishBatch(ctx, format, min(batch, n-done)); err != nil {
			return fmt.Errorf("fill %s: %w", e.queueOf(format), err)
		}
	}
	return nil
}
