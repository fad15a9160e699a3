package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/consume"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/obs"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrReplayLoop is returned by Connection.Replay, before anything is read, when the
// target is the source queue itself; a message whose own queue is the
// source is left where it is with a failure matching it.
var ErrReplayLoop = errors.New("acemq: replay onto its own source queue")

// ErrReplayNotAllowed is the error of a message Connection.Replay left on
// the source because its own headers (x-acemq-queue, x-death) name a
// queue the pass does not send to: not the queue the source belongs to
// (q for q.dlq or q.parked) nor one of ReplayOptions.Queues. Anyone who
// can publish into a dead-letter queue can write those headers.
var ErrReplayNotAllowed = errors.New("acemq: replay target not allowed")

// ReplayOptions bound and direct a replay: a value describing one pass
// (acemq replay builds one from its flags). The zero value replays every
// message to its own queue with a fresh attempt count, until the source is
// drained. How long a pass may run is ctx's (Connection.Replay).
type ReplayOptions struct {
	// RoutingKey sends every message with this routing key instead of to
	// its own queue: to the queue of that name when Exchange is empty.
	RoutingKey string
	// Exchange publishes through this exchange (it must exist). With no
	// RoutingKey, each message's own queue name is the routing key.
	Exchange string
	// Limit stops the pass after this many moves (0: no limit).
	Limit int
	// KeepAttempts puts back the attempt count and the error exactly as
	// they were; by default a replayed message restarts at attempt 1 with
	// its error cleared.
	KeepAttempts bool
	// Queues are the queues, beside the one the source belongs to (q for
	// q.dlq or q.parked), that a message may go back to when its own
	// headers name its target (no RoutingKey): acemq replay's --queue
	// and the queues of its -f manifest. A message whose headers name
	// another queue is left on the source, counted in Refused and listed
	// in Failures with ErrReplayNotAllowed.
	Queues []string
	// FollowHeaders sends each message to whatever queue its headers
	// name, allowed or not (acemq replay --follow-headers): only for a
	// source that no one but the runtime and the broker can publish into.
	FollowHeaders bool
	// Filter, when set, decides which messages move, from the envelope,
	// every header of the message (the application's and the broker's)
	// and the body; the ones it declines stay on the source (held
	// unsettled until the pass ends).
	Filter func(e Envelope, headers map[string]any, body []byte) bool
}

// ReplayStop is why a pass ended.
type ReplayStop string

const (
	// ReplayDrained: the source had nothing left that the pass had not seen.
	ReplayDrained ReplayStop = "drained"
	// ReplayLimit: Limit moves were made (or the pass held as many
	// unsettled messages as it may: maxReplayHeld).
	ReplayLimit ReplayStop = "limit"
	// ReplayDeadline: ctx's deadline (or MaxReplayPass) passed.
	ReplayDeadline ReplayStop = "deadline"
	// ReplayCancelled: ctx was cancelled.
	ReplayCancelled ReplayStop = "cancelled"
)

// ReplayResult is what a pass did. It prints as
// "moved 12, skipped 0 (drained)", with ", refused N" when the headers of
// some named a queue the pass does not send to, and ", failed N" when some
// could not be moved.
type ReplayResult struct {
	Moved   int // published to the target, confirmed, then acked
	Skipped int // declined by the filter, or already moved by this pass
	Failed  int // left on the source: no target, or the publish failed
	// Refused are left on the source because their headers name a queue
	// the pass does not send to (ErrReplayNotAllowed; not in Failed).
	Refused int
	Stop    ReplayStop
	// Failures says why each failed or refused message stayed (in the
	// order met).
	Failures []ReplayError
}

// ReplayError is a message the pass left on the source, and why.
type ReplayError struct {
	ID     string // x-acemq-id (or message id)
	Target string // where it was going, "" when it had no target
	Err    error
}

func (f ReplayError) Error() string {
	if f.Target == "" {
		return fmt.Sprintf("message %s: %v", f.ID, f.Err)
	}
	return fmt.Sprintf("message %s to %s: %v", f.ID, f.Target, f.Err)
}

func (f ReplayError) Unwrap() error { return f.Err }

func (r ReplayResult) String() string {
	s := fmt.Sprintf("moved %d, skipped %d", r.Moved, r.Skipped)
	if r.Refused > 0 {
		s += fmt.Sprintf(", refused %d", r.Refused)
	}
	if r.Failed > 0 {
		s += fmt.Sprintf(", failed %d", r.Failed)
	}
	return s + " (" + string(r.Stop) + ")"
}

// replayOwner is the queue a dead-letter or parked queue belongs to: q
// for q.dlq or q.parked, "" for any other name (wire.Owner, rungs left out).
func replayOwner(source string) string {
	if q, kind, ok := wire.Owner(source); ok && kind != wire.Rung {
		return q
	}
	return ""
}

// allowed says whether a pass from source may send a message to queue,
// a target its headers name: the queue source belongs to, one of
// opts.Queues, or any with opts.FollowHeaders.
func (opts ReplayOptions) allowed(source, queue string) bool {
	return opts.FollowHeaders || queue == replayOwner(source) || slices.Contains(opts.Queues, queue)
}

// notAllowed is the error of a message left on source because its headers
// name queue.
func (opts ReplayOptions) notAllowed(source, queue string) error {
	own := "it belongs to no queue (not a .dlq or .parked)"
	if q := replayOwner(source); q != "" {
		own = "not " + q + " (the queue " + source + " belongs to)"
	}
	named := "none named"
	if len(opts.Queues) > 0 {
		named = "not one of " + strings.Join(opts.Queues, ", ")
	}
	return fmt.Errorf("%w: its headers name queue %s, %s and %s (ReplayOptions.Queues, acemq replay --queue or -f); left on %s (FollowHeaders, --follow-headers, sends it where its headers say)",
		ErrReplayNotAllowed, queue, own, named, source)
}

// MaxReplayPass is the longest a pass runs: messages it holds unsettled
// must be settled well inside the broker's consumer timeout (30 minutes by
// default), or the broker closes the channel.
const MaxReplayPass = 20 * time.Minute

// maxReplayHeld bounds how many declined or failed messages a pass holds
// unsettled (each holds its body in memory); the pass stops with "limit"
// when it holds that many.
var maxReplayHeld = 100_000

// replayBatch is how many messages a pass reads before it publishes them
// (pipelined) and waits for their confirms.
var replayBatch = 256

// Replay moves the messages of queue from (a dead-letter or parked queue)
// back to where they belong: each to its own queue — x-acemq-queue, or the
// queue the broker dead-lettered it from (x-death, x-first-death-queue) —
// or wherever opts.RoutingKey and opts.Exchange say. It refuses a target
// that is from itself with ErrReplayLoop before touching anything.
//
// A message's headers are written by whoever published it into from, so
// the queue they name is followed only when it is allowed: the queue from
// belongs to (q for q.dlq or q.parked) or one of opts.Queues. A message
// whose headers name another queue is left on from, counted in Refused
// and listed in Failures with ErrReplayNotAllowed, unless
// opts.FollowHeaders. A target the caller names (opts.RoutingKey) is the
// caller's own choice and always allowed.
//
// Each move is a copy published mandatory with a publisher confirm, then
// an ack of the original: a failure in between leaves a duplicate, never a
// loss. The copy keeps the body byte for byte and the identity (x-acemq-id,
// correlation id, first seen, type, content type, application headers);
// it restarts at attempt 1 with the error cleared unless opts.KeepAttempts;
// it drops x-acemq-queue (it is no longer a dead letter) and the broker's
// x-death and x-first-death-* headers; and it is
// stamped acemq-replayed-from, acemq-replayed-at and acemq-replay-count
// (one more than it carried).
//
// How one pass never moves a message twice, over any number of messages:
// the pass reads with basic.get, which the channel's prefetch does not
// limit, in batches of a few hundred; each batch's moves are published
// together and acked once confirmed, so only the messages the pass declines
// stay unsettled, and those are held on the pass's channel until it ends
// and then returned together (a message returned at once would be the next
// one read, for ever). A message the pass moved that comes back to the
// source while it runs (a consumer rejected it again) is recognised by its
// x-acemq-id, remembered for the pass, and by its stamps (replayed from
// this source at this pass's start time, which every copy of the pass
// carries): it is declined, counted as skipped (so is a duplicate that was
// on the source already, with an id the pass moved). The held messages are
// bounded by MaxReplayPass (inside the broker's consumer timeout) and by a
// cap on their number.
//
// Declined messages go back with a nack (requeue): on a quorum source
// queue each such return counts against its delivery limit, so replay from
// classic queues (q.dlq and q.parked are) or filter little.
//
// The pass ends when the source has nothing it has not seen (drained),
// after opts.Limit moves (limit), at ctx's deadline or MaxReplayPass
// (deadline), or when ctx is cancelled (cancelled); the batch in flight is
// finished first, so every
// message is on one of the two queues. Messages that could not be moved
// are counted in Failed and listed in Failures; the error is for a pass
// that could not run (a missing queue or exchange, a lost connection).
func (c *Connection) Replay(ctx context.Context, from string, opts ReplayOptions) (ReplayResult, error) {
	res := ReplayResult{Stop: ReplayDrained}
	if from == "" {
		return res, errors.New("replay: no source queue")
	}
	if opts.Exchange == "" && opts.RoutingKey == from {
		return res, fmt.Errorf("replay %s to routing key %q: %w", from, opts.RoutingKey, ErrReplayLoop)
	}
	if opts.Limit < 0 {
		return res, fmt.Errorf("replay %s: negative limit %d", from, opts.Limit)
	}
	if err := c.checkExchange(ctx, opts.Exchange); err != nil {
		return res, fmt.Errorf("replay %s: %w", from, err)
	}
	if _, err := c.MessageCount(ctx, from); err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	cc, err := c.callChannel(ctx)
	if err != nil {
		return res, fmt.Errorf("replay %s: %w", from, err)
	}
	p := &replayPass{
		c: c, cc: cc, from: from, opts: opts,
		start: time.Now().UTC().Truncate(time.Millisecond),
		moved: map[string]bool{},
	}
	p.stamp = core.FormatTime(p.start)
	p.deadline = p.start.Add(MaxReplayPass)
	if d, ok := ctx.Deadline(); ok && d.Add(-replayReserve).Before(p.deadline) {
		// Room for the last batch's confirms before the deadline.
		p.deadline = d.Add(-replayReserve)
	}
	// Closing the channel returns whatever it still holds, also when a
	// filter panics.
	defer cc.Close(ctx)
	err = p.run(ctx, &res)
	if rerr := p.returnHeld(ctx); rerr != nil && err == nil {
		err = rerr
	}
	return res, err
}

// replayReserve is how long before ctx's deadline a pass stops reading,
// replayGrace how long past it (or past the end of a read that overran it)
// the batch in flight may wait for its confirms.
const (
	replayReserve = 100 * time.Millisecond
	replayGrace   = 50 * time.Millisecond
)

type replayPass struct {
	c        *Connection
	cc       *amqpx.CallChannel
	from     string
	opts     ReplayOptions
	start    time.Time
	stamp    string // acemq-replayed-at of every copy of this pass
	deadline time.Time
	moved    map[string]bool // x-acemq-ids moved by this pass
	held     int
	lastHeld uint64 // highest delivery tag held unsettled
}

// move is one message of a batch that goes to a target.
type move struct {
	d   amqp.Delivery
	id  string
	out amqpx.Outgoing
}

func (p *replayPass) run(ctx context.Context, res *ReplayResult) error {
	for {
		batch, stop, err := p.read(ctx, res)
		if p.cc.Abandoned {
			// Its originals go back to the source when the abandoned
			// channel closes: copies now would be duplicates.
			batch = nil
		}
		if len(batch) > 0 {
			if perr := p.publish(ctx, batch, res); perr != nil && err == nil {
				err = perr
			}
		}
		if err != nil {
			return err
		}
		if stop != "" {
			res.Stop = stop
			return nil
		}
	}
}

// read takes up to one batch of messages to move, holding the declined
// ones. stop is set when the pass must end after this batch.
func (p *replayPass) read(ctx context.Context, res *ReplayResult) ([]move, ReplayStop, error) {
	var batch []move
	for len(batch) < replayBatch {
		switch {
		case !time.Now().Before(p.deadline), errors.Is(ctx.Err(), context.DeadlineExceeded):
			return batch, ReplayDeadline, nil
		case ctx.Err() != nil:
			return batch, ReplayCancelled, nil
		case p.opts.Limit > 0 && res.Moved+len(batch) >= p.opts.Limit:
			return batch, ReplayLimit, nil
		case p.held >= maxReplayHeld:
			return batch, ReplayLimit, nil
		}
		got, err := amqpx.RoundTrip(ctx, p.cc, "basic.get", func(ch *amqp.Channel) (pulled, error) {
			d, ok, err := ch.Get(p.from, false)
			return pulled{d, ok}, err
		})
		if err != nil {
			return batch, "", fmt.Errorf("replay: read %q: %w", p.from, notFound(err))
		}
		d := got.d
		if !got.ok {
			return batch, ReplayDrained, nil
		}
		env := core.EnvelopeOf(d.Headers, d.MessageId, d.CorrelationId, d.Type, d.ContentType)
		if p.mine(d, env) || !p.accepts(env, d) {
			res.Skipped++
			p.hold(d)
			continue
		}
		target, key := p.target(d)
		if key == "" {
			res.Failed++
			res.Failures = append(res.Failures, ReplayError{ID: env.ID, Err: errors.New("no queue to go back to (no x-acemq-queue or x-first-death-queue): give a routing key")})
			p.hold(d)
			continue
		}
		if p.opts.Exchange == "" && key == p.from {
			res.Failed++
			res.Failures = append(res.Failures, ReplayError{ID: env.ID, Target: target, Err: ErrReplayLoop})
			p.hold(d)
			continue
		}
		if p.opts.RoutingKey == "" && !p.opts.allowed(p.from, key) {
			res.Refused++
			res.Failures = append(res.Failures, ReplayError{ID: env.ID, Target: target, Err: p.opts.notAllowed(p.from, key)})
			p.hold(d)
			continue
		}
		msg := p.copy(d)
		batch = append(batch, move{d: d, id: core.HeaderString(msg.Headers, wire.HeaderID),
			out: amqpx.Outgoing{Exchange: p.opts.Exchange, Key: key, Mandatory: true, Msg: msg, Parent: obs.TraceOf(d.Headers), Origin: "replay"}})
	}
	return batch, "", nil
}

// mine says whether d is a copy this pass already moved, come back.
func (p *replayPass) mine(d amqp.Delivery, env Envelope) bool {
	if env.ID != "" && p.moved[env.ID] {
		return true
	}
	return env.ReplayedFrom == p.from && core.HeaderString(d.Headers, wire.HeaderReplayedAt) == p.stamp
}

func (p *replayPass) accepts(env Envelope, d amqp.Delivery) bool {
	return p.opts.Filter == nil || p.opts.Filter(env, d.Headers, d.Body)
}

func (p *replayPass) hold(d amqp.Delivery) {
	p.held++
	p.lastHeld = max(p.lastHeld, d.DeliveryTag)
}

// target is where d goes: a printable name and the routing key.
func (p *replayPass) target(d amqp.Delivery) (string, string) {
	key := p.opts.RoutingKey
	if key == "" {
		key = OwnQueue(d.Headers)
	}
	if p.opts.Exchange != "" {
		return p.opts.Exchange + "/" + key, key
	}
	return key, key
}

// OwnQueue is the queue a dead letter or parked message came from: the
// queue the broker last dead-lettered it from (x-death, then
// x-first-death-queue), else x-acemq-queue (the library's own dead letters
// and parks, which carry no x-death). "" when the headers name none.
func OwnQueue(headers map[string]any) string {
	if deaths, ok := headers[wire.HeaderDeath].([]any); ok && len(deaths) > 0 {
		if t, ok := deaths[0].(amqp.Table); ok {
			if q, ok := t["queue"].(string); ok && q != "" {
				return q
			}
		}
	}
	for _, k := range []string{wire.HeaderLastDeathQueue, wire.HeaderFirstDeathQueue} {
		if q := core.HeaderString(headers, k); q != "" {
			return q
		}
	}
	return core.HeaderString(headers, wire.HeaderQueue)
}

// copy is d as replayed: copyOf's identity-keeping copy, with the attempt
// and error restarted (or exactly as they were) and the replay stamps.
func (p *replayPass) copy(d amqp.Delivery) amqp.Publishing {
	msg := consume.CopyOf(d, 1, "", "")
	h := msg.Headers
	if p.opts.KeepAttempts {
		if v, ok := d.Headers[wire.HeaderAttempt]; ok {
			h[wire.HeaderAttempt] = v
		} else {
			delete(h, wire.HeaderAttempt)
		}
	} else {
		delete(h, wire.HeaderError)
	}
	// The copy is no longer a dead letter: x-acemq-queue goes, so that if
	// the broker dead-letters it later its envelope reads the broker's
	// reason rather than this stale one.
	delete(h, wire.HeaderQueue)
	h[wire.HeaderReplayedFrom] = p.from
	h[wire.HeaderReplayedAt] = p.stamp
	h[wire.HeaderReplayCount] = core.PositiveInt(d.Headers[wire.HeaderReplayCount], 0) + 1
	return msg
}

// publish sends a batch pipelined, then acks each confirmed original; an
// original whose copy failed is held. The batch in flight is finished even
// when ctx is cancelled, so a cancelled pass leaves no message on both
// queues; it waits for its confirms until replayGrace past ctx's deadline
// (or past now, for a read that overran it), consume.SetAsideTimeout at most. A
// copy the broker confirms after that is a duplicate (its original goes
// back to the source), never a loss.
func (p *replayPass) publish(ctx context.Context, batch []move, res *ReplayResult) error {
	pctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), p.finishBy(ctx))
	defer cancel()
	out := make([]amqpx.Outgoing, len(batch))
	for i, m := range batch {
		out[i] = m.out
	}
	errs := p.c.publishAll(pctx, true, out)
	late := 0
	for i, m := range batch {
		if errs[i] != nil {
			res.Failed++
			res.Failures = append(res.Failures, ReplayError{ID: m.id, Target: m.out.Key, Err: errs[i]})
			p.hold(m.d)
			if errors.Is(errs[i], context.DeadlineExceeded) {
				late++
			}
			continue
		}
		p.moved[m.id] = true
		if err := p.cc.Ch.Ack(m.d.DeliveryTag, false); err != nil {
			// The copy is on the target; the original returns to the
			// source when the channel goes: a duplicate, never a loss.
			return fmt.Errorf("replay: ack %s after its copy was confirmed: %w", m.id, err)
		}
		res.Moved++
		p.c.metrics.Add(p.c.metrics.ReplayMoved, p.from)
	}
	if late > 0 {
		return fmt.Errorf("replay: the broker did not confirm %d copies by the deadline (their originals stay on %s; a copy it confirms later is a duplicate): %w", late, p.from, pctx.Err())
	}
	return nil
}

// finishBy is when the batch in flight stops waiting for its confirms.
func (p *replayPass) finishBy(ctx context.Context) time.Time {
	most := time.Now().Add(consume.SetAsideTimeout)
	d, ok := ctx.Deadline()
	if !ok {
		return most
	}
	if now := time.Now(); d.Before(now) {
		d = now
	}
	if d = d.Add(replayGrace); d.Before(most) {
		return d
	}
	return most
}

// returnHeld gives back every held message at once: one nack (multiple,
// requeue) up to the last held tag, which covers exactly the held ones
// since every other delivery of the channel is acked. The broker puts them
// back in their places; the pass ends when it counts them back.
func (p *replayPass) returnHeld(ctx context.Context) error {
	if p.held == 0 || p.cc.Abandoned || p.cc.Ch.IsClosed() {
		return nil
	}
	if err := p.cc.Ch.Nack(p.lastHeld, true, true); err != nil {
		return fmt.Errorf("replay: return %d declined messages to %s (they return when the channel closes): %w", p.held, p.from, err)
	}
	if err := waitReturned(ctx, p.cc, p.from, p.held); err != nil {
		return fmt.Errorf("replay: %s: %w", p.from, err)
	}
	return nil
}
