package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/trace"
)

// publisher returns the session's confirm channel of the given kind (the
// application's, or the consumers' side channel), opening one if needed.
func (c *Connection) publisher(ctx context.Context, side bool) (*amqpx.Publisher, error) {
	slot := func() **amqpx.Publisher {
		if side {
			return &c.side
		}
		return &c.pub
	}
	c.mu.Lock()
	if p := *slot(); p != nil && p.Alive() {
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	ch, conn, err := c.channelOn(ctx)
	if err != nil {
		return nil, err
	}
	p, err := amqpx.NewPublisher(ctx, c.blockedNote, ch, c.corkOf(conn))
	if err != nil {
		return nil, err
	}
	p.FrameMax = amqpx.FrameMaxOf(conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := *slot(); cur != nil && cur.Alive() {
		// Another caller won the race; keep one channel. The spare's close
		// is a round trip that takes no ctx (behind a write the broker
		// does not read, under an alarm, it waits as long as the alarm):
		// it goes on without this caller, and without c.mu held.
		go ch.Close()
		return cur, nil
	}
	*slot() = p
	return p, nil
}

// checkExchange makes sure exchange exists before the first publish to it
// in this session, with a passive declare on a throwaway channel: a publish
// to a missing exchange would make the broker close the shared confirm
// channel, failing every other publish in flight on it.
func (c *Connection) checkExchange(ctx context.Context, exchange string) error {
	if exchange == "" {
		return nil
	}
	if err := amqpx.CheckShort("exchange", exchange); err != nil {
		return err // a passive declare of it would close the connection
	}
	c.mu.Lock()
	known := c.exchanges[exchange]
	c.mu.Unlock()
	if known {
		return nil
	}
	cc, err := c.callChannel(ctx)
	if err != nil {
		return err
	}
	defer cc.Close(ctx)
	if err := cc.Do(ctx, "exchange.declare", func(ch *amqp.Channel) error {
		return ch.ExchangeDeclarePassive(exchange, "", false, false, false, false, nil)
	}); err != nil {
		if amqpx.IsNotFound(err) {
			return fmt.Errorf("%w: %w (declare the topology first: Connection.Declare)", ErrExchangeNotFound, err)
		}
		return err
	}
	c.mu.Lock()
	if c.exchanges == nil {
		c.exchanges = map[string]bool{}
	}
	c.exchanges[exchange] = true
	c.mu.Unlock()
	return nil
}

// publishAll sends every message pipelined on the application's (or, with
// side, the consumers') confirm channel, then waits for each outcome (its
// confirm, or its write's failure). It returns one error per message (nil
// for a confirmed one) and queues none after one it could not queue (a
// dead channel, a blocked connection, ctx's end).
func (c *Connection) publishAll(ctx context.Context, side bool, out []amqpx.Outgoing) []error {
	errs := make([]error, len(out))
	c.publishInto(ctx, side, out, errs)
	return errs
}

// publishInto is publishAll writing each message's outcome into errs
// (one a message), so that a caller of one message keeps both on its
// stack.
func (c *Connection) publishInto(ctx context.Context, side bool, out []amqpx.Outgoing, errs []error) {
	// One producer span per message, ended when its confirm arrives; its
	// context is what the message's headers carry.
	start := time.Now()
	var one [1]trace.Span // a single publish allocates no slice
	spans := one[:min(len(out), 1)]
	if len(out) > 1 {
		spans = make([]trace.Span, len(out))
	}
	for i := range out {
		spans[i] = c.startPublish(ctx, &out[i])
	}
	defer func() {
		for i, span := range spans {
			c.endPublish(span, &out[i], start, errs[i])
		}
	}()
	var err error
	for _, o := range out {
		if err = c.checkExchange(ctx, o.Exchange); err != nil {
			break
		}
	}
	var p *amqpx.Publisher
	if err == nil {
		p, err = c.publisher(ctx, side)
	}
	// Every message is queued before any write is waited for, so the
	// writer writes the batch in one go.
	queued := make([]*amqpx.Inflight, len(out))
	for i, o := range out {
		if err == nil {
			// While the broker blocks the connection, fail at once with its
			// reason rather than write what it will not read.
			err = c.blockedErr()
		}
		if err == nil {
			if ferr := p.Fit(&o); ferr != nil {
				// This message only: it is never written.
				errs[i] = c.publishError(o, ferr)
				continue
			}
			queued[i], err = p.Queue(ctx, o.Exchange, o.Key, o.Mandatory, o.Msg)
		}
		if err != nil {
			queued[i] = nil
			errs[i] = c.publishError(o, err)
		}
	}
	// One wait a message, for its outcome (its write's failure included).
	for i, f := range queued {
		if f == nil {
			continue
		}
		if e := f.AwaitOutcome(ctx); e != nil {
			errs[i] = c.publishError(out[i], e)
		}
	}
}

// setAside sends a consumer's copy (retry, dead letter, park) on the side
// channel and waits for its confirm.
func (c *Connection) setAside(ctx context.Context, o amqpx.Outgoing) error {
	var errs [1]error
	c.publishInto(ctx, true, []amqpx.Outgoing{o}, errs[:])
	return errs[0]
}

func (c *Connection) publishError(o amqpx.Outgoing, err error) error {
	if amqpx.ConnectionLost(err) {
		err = &unavailableError{err: err}
	}
	return &PublishError{Exchange: o.Exchange, RoutingKey: o.Key, Err: err}
}
