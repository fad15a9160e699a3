package runtime

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// publisher is one confirm-mode channel shared by every publish of a
// connection session. Publishes are pipelined: each call registers its
// delivery tag, writes, and waits only for its own confirm.
//
// A mandatory publish that no queue takes comes back as basic.return before
// its basic.ack. amqp091-go hands both to listeners from its one reader
// goroutine, in that order, and blocks until they are taken; one goroutine
// here takes both from unbuffered channels, so it always sees a return
// before the confirm of the same message. A return names no delivery tag:
// it is matched to the oldest publish in flight with the same message id,
// exchange and routing key. The id alone is not enough: a consumer
// republishes a message (same id, another queue) while the confirm of the
// original publish, waiting for the broker's disk, may still be in flight.
type publisher struct {
	ch *amqp.Channel

	sendMu sync.Mutex // serialises tag allocation and the write

	mu      sync.Mutex
	pending map[uint64]*inflight
	byKey   map[returnKey][]uint64 // tags in flight, oldest first
	dead    error                  // set once the channel is gone
}

// returnKey is what a basic.return says of the message it returns.
type returnKey struct{ id, exchange, routingKey string }

type inflight struct {
	key      returnKey
	returned bool
	done     chan error // buffered 1
}

func newPublisher(ch *amqp.Channel) (*publisher, error) {
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("confirm mode: %w", err)
	}
	p := &publisher{ch: ch, pending: map[uint64]*inflight{}, byKey: map[returnKey][]uint64{}}
	returns := ch.NotifyReturn(make(chan amqp.Return))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	go p.loop(returns, confirms, closes)
	return p, nil
}

func (p *publisher) loop(returns <-chan amqp.Return, confirms <-chan amqp.Confirmation, closes <-chan *amqp.Error) {
	for {
		select {
		case r, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			p.markReturned(r)
		case cf, ok := <-confirms:
			if !ok {
				var err error = amqp.ErrClosed
				if e, ok := <-closes; ok && e != nil {
					err = e
				}
				p.fail(err)
				return
			}
			p.resolve(cf)
		}
	}
}

func (p *publisher) markReturned(r amqp.Return) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tags := p.byKey[returnKey{r.MessageId, r.Exchange, r.RoutingKey}]; len(tags) > 0 {
		if f := p.pending[tags[0]]; f != nil {
			f.returned = true
		}
	}
}

func (p *publisher) resolve(cf amqp.Confirmation) {
	p.mu.Lock()
	f := p.pending[cf.DeliveryTag]
	delete(p.pending, cf.DeliveryTag)
	if f != nil {
		p.forget(f.key, cf.DeliveryTag)
	}
	p.mu.Unlock()
	if f == nil {
		return
	}
	switch {
	case !cf.Ack:
		f.done <- ErrNacked
	case f.returned:
		f.done <- ErrUnroutable
	default:
		f.done <- nil
	}
}

// forget drops tag from the return index; p.mu is held.
func (p *publisher) forget(key returnKey, tag uint64) {
	tags := p.byKey[key]
	for i, t := range tags {
		if t == tag {
			tags = append(tags[:i], tags[i+1:]...)
			break
		}
	}
	if len(tags) == 0 {
		delete(p.byKey, key)
	} else {
		p.byKey[key] = tags
	}
}

func (p *publisher) fail(err error) {
	p.mu.Lock()
	p.dead = err
	pending := p.pending
	p.pending, p.byKey = map[uint64]*inflight{}, map[returnKey][]uint64{}
	p.mu.Unlock()
	for _, f := range pending {
		f.done <- err
	}
}

func (p *publisher) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead == nil && !p.ch.IsClosed()
}

// send writes one message and returns the channel its outcome arrives on.
func (p *publisher) send(ctx context.Context, exchange, key string, mandatory bool, msg amqp.Publishing) (<-chan error, error) {
	f := &inflight{key: returnKey{msg.MessageId, exchange, key}, done: make(chan error, 1)}
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	tag := p.ch.GetNextPublishSeqNo()
	p.mu.Lock()
	if p.dead != nil {
		err := p.dead
		p.mu.Unlock()
		return nil, err
	}
	p.pending[tag] = f
	p.byKey[f.key] = append(p.byKey[f.key], tag)
	p.mu.Unlock()
	if err := p.ch.PublishWithContext(ctx, exchange, key, mandatory, false, msg); err != nil {
		p.mu.Lock()
		delete(p.pending, tag)
		p.forget(f.key, tag)
		p.mu.Unlock()
		return nil, err
	}
	return f.done, nil
}

// publisher returns the session's confirm channel, opening one if needed.
func (c *Connection) publisher(ctx context.Context) (*publisher, error) {
	c.mu.Lock()
	if p := c.pub; p != nil && p.alive() {
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	ch, err := c.channel(ctx)
	if err != nil {
		return nil, err
	}
	p, err := newPublisher(ch)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.pub; cur != nil && cur.alive() {
		// Another caller won the race; keep one channel.
		ch.Close()
		return cur, nil
	}
	c.pub = p
	return p, nil
}

// outgoing is one message ready for the wire.
type outgoing struct {
	exchange, key string
	mandatory     bool
	msg           amqp.Publishing
}

// publishAll sends every message pipelined, then waits for each confirm.
// It returns one error per message (nil for a confirmed one) and stops
// sending at the first write error.
func (c *Connection) publishAll(ctx context.Context, out []outgoing) []error {
	errs := make([]error, len(out))
	waits := make([]<-chan error, len(out))
	p, err := c.publisher(ctx)
	for i, o := range out {
		if err == nil {
			waits[i], err = p.send(ctx, o.exchange, o.key, o.mandatory, o.msg)
		}
		if err != nil {
			errs[i] = c.publishError(o, err)
		}
	}
	for i, w := range waits {
		if w == nil {
			continue
		}
		select {
		case e := <-w:
			if e != nil {
				errs[i] = c.publishError(out[i], e)
			}
		case <-ctx.Done():
			errs[i] = c.publishError(out[i], fmt.Errorf("waiting for the broker's confirm: %w", ctx.Err()))
		}
	}
	return errs
}

// publishOne sends one message and waits for its confirm.
func (c *Connection) publishOne(ctx context.Context, o outgoing) error {
	return c.publishAll(ctx, []outgoing{o})[0]
}

func (c *Connection) publishError(o outgoing, err error) error {
	return &PublishError{Exchange: o.exchange, RoutingKey: o.key, Err: err}
}
