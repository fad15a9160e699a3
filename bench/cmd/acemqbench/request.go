package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acemq/acemq-go/bench/orders"
	amqp "github.com/rabbitmq/amqp091-go"
)

// RR1 (issue 21): round trips of a request and its reply over direct
// reply-to, g in flight. Both sides send the same request (the order, as
// the runtime puts it on the wire) to bench.requests and are answered by
// the same responder, raw amqp091-go on a connection of its own (one
// goroutine: publish the reply, ack the request), so the ratio is the
// requester's cost alone: the generated RequestPriceOrder (its Requester's
// one channel, correlation ids, confirms, ctx as the timeout and the
// request's expiration, decoding the reply) against direct reply-to done
// by hand on one channel (a consumer on amq.rabbitmq.reply-to, a map of
// correlation ids, requests published mandatory without confirms, as
// RabbitMQ's RPC tutorial does).

const (
	queueRequests = "bench.requests"
	// requestTimeout is each request's ctx on both sides.
	requestTimeout = 30 * time.Second
)

// typedRequests times n round trips through the generated requester from
// g goroutines, each waiting for its reply before it sends the next.
func typedRequests(g int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		stop, err := e.respond(ctx)
		if err != nil {
			return 0, 0, err
		}
		defer stop()
		p := orders.NewBenchRequestsPublisher(e.conn)
		defer func() { _ = p.Close(context.Background()) }()
		// The Requester opens its channel on first use: not timed.
		if _, err := p.RequestPriceOrder(ctx, e.priceValue); err != nil {
			return 0, 0, fmt.Errorf("warm-up request: %w", err)
		}
		return e.roundTrips(ctx, n, g, func(ctx context.Context) error {
			rep, err := p.RequestPriceOrder(ctx, e.priceValue)
			if err == nil && rep.OrderID != e.priceValue.OrderID {
				err = fmt.Errorf("the reply is for order %q, not %q", rep.OrderID, e.priceValue.OrderID)
			}
			return err
		})
	}
}

// rawRequests times n round trips done by hand with amqp091-go from g
// goroutines.
func rawRequests(g int) runFunc {
	return func(ctx context.Context, e *env, n int) (time.Duration, int, error) {
		stop, err := e.respond(ctx)
		if err != nil {
			return 0, 0, err
		}
		defer stop()
		ch, err := e.raw.Channel()
		if err != nil {
			return 0, 0, fmt.Errorf("raw requester's channel: %w", err)
		}
		defer ch.Close()
		replies, err := ch.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
		if err != nil {
			return 0, 0, fmt.Errorf("consume amq.rabbitmq.reply-to: %w", err)
		}
		var mu sync.Mutex
		waits := map[string]chan amqp.Delivery{}
		go func() {
			for d := range replies {
				mu.Lock()
				w := waits[d.CorrelationId]
				delete(waits, d.CorrelationId)
				mu.Unlock()
				if w != nil {
					w <- d
				}
			}
		}()
		tmpl := e.requestWire
		var next atomic.Int64
		return e.roundTrips(ctx, n, g, func(ctx context.Context) error {
			id := strconv.FormatInt(next.Add(1), 10)
			w := make(chan amqp.Delivery, 1)
			mu.Lock()
			waits[id] = w
			mu.Unlock()
			msg := tmpl
			msg.CorrelationId, msg.ReplyTo, msg.MessageId, msg.Timestamp = id, "amq.rabbitmq.reply-to", id, time.Now()
			if err := ch.PublishWithContext(ctx, "", queueRequests, true, false, msg); err != nil {
				return err
			}
			select {
			case d := <-w:
				var rep orders.OrderPriced
				if err := json.Unmarshal(d.Body, &rep); err != nil {
					return err
				}
				if rep.OrderID != e.priceValue.OrderID {
					return fmt.Errorf("the reply is for order %q, not %q", rep.OrderID, e.priceValue.OrderID)
				}
				return nil
			case <-ctx.Done():
				mu.Lock()
				delete(waits, id)
				mu.Unlock()
				return ctx.Err()
			}
		})
	}
}

// roundTrips runs one round trip n times from g goroutines, each with a
// ctx of requestTimeout, and keeps each one's latency (e.latencies).
func (e *env) roundTrips(ctx context.Context, n, g int, one func(context.Context) error) (time.Duration, int, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, g)
	lat := make([][]time.Duration, g)
	start := e.clockStart()
	for i := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, n/g+1)
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				rctx, cancel := context.WithTimeout(ctx, requestTimeout)
				err := one(rctx)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, time.Since(t0))
			}
			lat[i] = mine
		}()
	}
	wg.Wait()
	d := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	e.latencies = slices.Concat(lat...)
	return d, n, nil
}

// respond starts the responder of both sides on a connection of its own:
// each request is answered with e.replyWire and acked. stop closes it.
func (e *env) respond(ctx context.Context) (stop func(), err error) {
	conn, err := amqp.Dial(e.url)
	if err != nil {
		return nil, fmt.Errorf("responder's connection: %w", err)
	}
	ch, err := conn.Channel()
	if err == nil {
		err = ch.Qos(256, 0, false)
	}
	var ds <-chan amqp.Delivery
	if err == nil {
		ds, err = ch.Consume(queueRequests, "", false, false, false, false, nil)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("responder: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range ds {
			rep := e.replyWire
			rep.CorrelationId = d.CorrelationId
			_ = ch.PublishWithContext(ctx, "", d.ReplyTo, false, false, rep)
			_ = d.Ack(false)
		}
	}()
	return func() {
		_ = conn.Close()
		<-done
	}, nil
}

// setRequestWire builds the request both sides send (the order as the
// runtime encodes a PriceOrder: e.wire's JSON body with the request's type
// and reply type) and the responder's reply.
func (e *env) setRequestWire() error {
	e.priceValue = orders.PriceOrder(e.jsonValue)
	req := e.wire["json"]
	req.Type = orders.TypeOfPriceOrder().Name()
	req.DeliveryMode = amqp.Transient // as the runtime sends a request
	h := make(amqp.Table, len(req.Headers)+1)
	for k, v := range req.Headers {
		h[k] = v
	}
	h[wire.HeaderReplyType] = orders.TypeOfOrderPriced().Name()
	req.Headers = h
	e.requestWire = req
	body, err := json.Marshal(orders.OrderPriced{OrderID: e.priceValue.OrderID, Total: e.priceValue.Total})
	if err != nil {
		return err
	}
	e.replyWire = amqp.Publishing{
		ContentType: "application/json", Type: orders.TypeOfOrderPriced().Name(), DeliveryMode: amqp.Transient,
		Headers: amqp.Table{wire.HeaderReplyType: orders.TypeOfOrderPriced().Name()}, Body: body,
	}
	return nil
}

// percentile is the p-th percentile (0–100) of ds, nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
