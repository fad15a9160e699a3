package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/wire"

	amqp "github.com/rabbitmq/amqp091-go"
)

// errRetryRequest marks a request handler's error that asks for another
// attempt.
var errRetryRequest = errors.New("retry the request")

type retryRequestError struct{ err error }

func (e *retryRequestError) Error() string   { return core.Reason(e.err) }
func (e *retryRequestError) Unwrap() []error { return []error{errRetryRequest, e.err} }

// RetryRequest marks err as a request handler's ask for another attempt
// by the queue's retry policy, instead of a reply.
func RetryRequest(err error) error { return &retryRequestError{err: err} }

// Handler answers one request type: the reply, or an error sent as a
// *core.ReplyError (package runtime's RequestHandler).
type Handler[Req, Rep any] func(ctx context.Context, m *core.Message[Req]) (Rep, error)

// HandleRequest is the route of the requests of type reqType to h, which
// answers each with a reply of type repType: its prechecks before the
// decode (reply_to, the reply type, expiry, the requester's check), its
// answer inside the middlewares, so that the Ack they see is the answer's
// outcome.
func HandleRequest[Req, Rep any](reqType *msgtype.MessageType[Req], repType *msgtype.MessageType[Rep], h Handler[Req, Rep]) core.Route {
	inner := answerInto(repType, h)
	r := requestRoute(reqType, repType.Name(), inner)
	return core.WithWrap(r, func(queue string, mws []core.Middleware) core.Route {
		return requestRoute(reqType, repType.Name(), core.Chain(queue, mws, inner))
	})
}

// answer is the request being answered, put where the innermost handler
// finds it through ctx: the handler runs inside the middlewares (chain),
// which pass ctx on but return an Ack. answered is set once the handler
// ran and its answer was carried out.
type answer struct {
	r        responding
	answered bool
}

type answerKey struct{}

// answerInto is h as a Handler: it calls h and answers the request with
// what h returned, inside the middlewares, so that the Ack they see is the
// answer's outcome: Accept once the reply (or the error reply) is
// confirmed, or dropped because its requester has gone; Retry when it
// could not be sent, or for RetryRequest. A middleware that marks a
// request handled on Accept (pgstore's inbox, redisstore's dedup) marks it
// only once it is answered: a request retried for want of a reply is not
// taken for a duplicate of itself.
func answerInto[Req, Rep any](repType *msgtype.MessageType[Rep], h Handler[Req, Rep]) core.Handler[Req] {
	return func(ctx context.Context, m *core.Message[Req]) core.Ack {
		a := ctx.Value(answerKey{}).(*answer)
		rep, err := invokeRequest(ctx, h, m)
		defer func() { a.answered = true }()
		switch {
		case err != nil && errors.Is(err, errRetryRequest):
			return a.r.retryOrSettle(ctx, err)
		case err != nil:
			return a.r.replyError(ctx, err)
		}
		return replyWith(ctx, a.r, repType, rep)
	}
}

// requestRoute is the route of reqType to inner (h, within any
// middlewares), which answers each request with a reply of type replyType.
func requestRoute[Req any](reqType *msgtype.MessageType[Req], replyType string, inner core.Handler[Req]) core.Route {
	// its prechecks come before the decode
	return core.WithRun(core.NewRoute(reqType, inner), func(ctx context.Context, link core.Conn, d *amqp.Delivery, env core.Envelope, apps map[string]any) (core.Ack, error) {
		c := link.(Conn)
		r := responding{c: c, d: d, replyType: replyType}
		if ack, done := r.precheck(ctx); done {
			return ack, nil
		}
		a := &answer{r: r}
		ack, err := core.DecodeAndCall(context.WithValue(ctx, answerKey{}, a), link, reqType, d, env, apps, inner)
		switch {
		case err != nil:
			if !core.Transient(err) {
				r.replyError(ctx, &core.ReplyError{Code: "bad_request", Reason: "could not be decoded: " + err.Error()})
			}
			return core.Ack{}, err
		case !a.answered:
			return r.middlewareAnswered(ctx, ack), nil
		}
		// The answer's outcome as the middlewares passed it on, or one
		// that overrode it after the answer went out (an inbox whose
		// commit failed: Retry, the handler run and the request answered
		// again; its caller counts the second reply as late).
		return ack, nil
	})
}

// middlewareAnswered carries out a middleware's ack on a request whose
// handler did not run (the middleware answered in its stead): its caller
// is told at once, with an error reply coded by the outcome ("rejected", "parked",
// "panic", "not_handled" for an Accept without the handler), and the
// request goes where the ack says; a Retry is not climbed when the caller
// has gone (as RetryRequest's), else the caller keeps waiting. A panic is
// answered and settled as a handler's panic is.
func (r responding) middlewareAnswered(ctx context.Context, ack core.Ack) core.Ack {
	var pe *core.PanicError
	switch ack.Kind() {
	case core.AckRetry:
		if errors.As(ack.Err(), &pe) {
			r.replyError(ctx, &core.ReplyError{Code: "panic", Reason: pe.Error()})
			return core.Accept()
		}
		return r.retryOrSettle(ctx, ack.Err())
	case core.AckReject:
		return r.answerThen(ctx, "rejected", ack)
	case core.AckPark:
		return r.answerThen(ctx, "parked", ack)
	}
	// An Accept here is one without the handler (an inbox that has seen
	// the request, say).
	r.replyError(ctx, &core.ReplyError{Code: "not_handled", Reason: "a middleware settled the request without calling its handler"})
	return ack
}

// answerThen answers the request with an error reply of code and the
// ack's reason, then returns ack; a reply that could not be sent leaves
// the request to ack all the same (it goes where the middleware said).
func (r responding) answerThen(ctx context.Context, code string, ack core.Ack) core.Ack {
	r.replyError(ctx, &core.ReplyError{Code: code, Reason: core.Reason(ack.Err())})
	return ack
}

// replyWith encodes rep and sends it as r's reply.
func replyWith[Rep any](ctx context.Context, r responding, repType *msgtype.MessageType[Rep], rep Rep) core.Ack {
	codec, err := core.CodecFor(repType, r.c)
	if err != nil {
		return core.Retry(fmt.Errorf("the reply's codec: %w", err))
	}
	o, err := r.c.Encode(ctx, repType.Name(), codec, rep)
	if err != nil {
		return r.replyError(ctx, &core.ReplyError{Code: "error", Reason: "the reply does not encode: " + err.Error()})
	}
	return r.send(ctx, o)
}

// invokeRequest calls h, turning a panic into a "panic" reply error.
func invokeRequest[Req, Rep any](ctx context.Context, h Handler[Req, Rep], m *core.Message[Req]) (rep Rep, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := core.NewPanicError(v)
			err = &core.ReplyError{Code: "panic", Reason: pe.Error()}
		}
	}()
	return h(ctx, m)
}

// responding is one request being answered.
type responding struct {
	c         Conn
	d         *amqp.Delivery
	replyType string
}

// precheck settles, before any decode, a request that cannot be answered:
// no reply_to, or one that is not a requester's reply address (parked),
// another reply type expected (answered), its caller gone (with
// WithRequesterCheck).
func (r responding) precheck(ctx context.Context) (core.Ack, bool) {
	if r.d.ReplyTo == "" {
		return core.Park(errors.New("a request without reply_to: there is nowhere to send its reply")), true
	}
	info := core.DecodeInfoOf(ctx)
	if strings.HasPrefix(r.d.ReplyTo, core.DirectReplyTo+".") && !amqpx.DirectAddressWellFormed(r.d.ReplyTo) {
		return core.Park(fmt.Errorf("a request whose reply_to %q is not a direct reply-to address the broker made (a reply to it would make RabbitMQ close the responder's connection): its reply was not sent",
			r.d.ReplyTo)), true
	}
	if !info.ReplyTo.Allows(r.d.ReplyTo) {
		return core.Park(fmt.Errorf("a request whose reply_to %q is not a requester's reply address (%s*, %s*%s): its reply was not sent",
			r.d.ReplyTo, core.DirectReplyTo+".", wire.ReplyQueuePrefix, info.ReplyTo.String())), true
	}
	if want := core.HeaderString(r.d.Headers, wire.HeaderReplyType); want != "" && want != r.replyType {
		err := &core.ReplyError{Code: "wrong_reply_type", Reason: fmt.Sprintf("the responder replies %q, not %q", r.replyType, want)}
		return r.replyError(ctx, err), true
	}
	if r.expired(info) {
		return core.Accept(), true
	}
	if info.CheckRequester && !r.requesterThere(ctx) {
		return core.Accept(), true
	}
	return core.Ack{}, false
}

// expired reports whether the request's caller has stopped waiting by
// now, as its expiration says: the caller's time left when it sent the
// request, which the consumer received after that, so received plus the
// expiration is never before the caller's deadline (no clock of another
// host is read). Such a request is settled without running it, counted
// and logged. A request without an expiration (a retried copy, a caller
// without a deadline) has no deadline to pass.
func (r responding) expired(info core.DecodeInfo) bool {
	if r.d.Expiration == "" || info.Received.IsZero() {
		return false
	}
	ms, err := strconv.ParseInt(r.d.Expiration, 10, 64)
	if err != nil || ms < 0 {
		return false
	}
	late := time.Since(info.Received) - time.Duration(ms)*time.Millisecond
	if late <= 0 {
		return false
	}
	m := r.c.Metrics()
	m.Add(m.RequestsExpired, info.Queue)
	r.c.Log().Debug("acemq: the request's caller stopped waiting before the responder came to it; settled without running it",
		"queue", info.Queue, "type", r.d.Type, "id", r.d.MessageId, "correlation_id", r.d.CorrelationId,
		"expiration_ms", ms, "late", late.Round(time.Millisecond))
	return true
}

// requesterThere reports whether the request's caller is still there; an
// error of the check itself counts as there (the work is done, not lost).
func (r responding) requesterThere(ctx context.Context) bool {
	there, err := RequesterWaiting(ctx, r.c, r.d.ReplyTo)
	if err != nil {
		r.c.Log().Warn("acemq: could not check that the requester is still there; answering anyway", "reply_to", r.d.ReplyTo, "err", err)
		return true
	}
	if !there {
		r.c.Log().Info("acemq: the requester has gone; the request is settled without a reply",
			"type", r.d.Type, "id", r.d.MessageId, "correlation_id", r.d.CorrelationId, "reply_to", r.d.ReplyTo)
	}
	return there
}

// retryOrSettle retries the request when its caller is still there, else
// settles it.
func (r responding) retryOrSettle(ctx context.Context, err error) core.Ack {
	if !r.requesterThere(ctx) {
		return core.Accept()
	}
	return core.Retry(err)
}

// replyError answers the request with err.
func (r responding) replyError(ctx context.Context, err error) core.Ack {
	var re *core.ReplyError
	if !errors.As(err, &re) {
		re = &core.ReplyError{Code: "error", Reason: core.Reason(err)}
	}
	code := re.Code
	if code == "" {
		code = "error"
	}
	h := map[string]any{wire.HeaderReplyError: core.CapReason(re.Reason), wire.HeaderReplyErrorCode: code}
	o := amqpx.Outgoing{Mandatory: true, Msg: r.c.NewPublishing(r.replyType, "text/plain", nil, h)}
	return r.send(ctx, o)
}

// send publishes the reply o to the request's reply_to and says what
// becomes of the request.
func (r responding) send(ctx context.Context, o amqpx.Outgoing) core.Ack {
	o.Exchange, o.Key, o.Mandatory = "", r.d.ReplyTo, true
	o.Msg.CorrelationId = r.d.CorrelationId
	o.Msg.Headers[wire.HeaderReplyType] = r.replyType
	if tok, ok := r.d.Headers[wire.HeaderReplyToken].(string); ok && tok != "" && len(tok) <= maxReplyToken {
		o.Msg.Headers[wire.HeaderReplyToken] = tok // the requester's key for its reply, echoed
	}
	if strings.HasPrefix(r.d.ReplyTo, core.DirectReplyTo+".") {
		o.Msg.DeliveryMode = amqp.Transient // it lives no longer than its requester's channel
		// Not mandatory: RabbitMQ 3.x returns a mandatory publish to a
		// direct reply-to address even when it delivered it, and 4.2+
		// never returns one; whether the requester is there is
		// RequesterWaiting's question.
		o.Mandatory = false
	}
	err := r.c.Publish(ctx, o)
	switch {
	case err == nil:
		return core.Accept()
	case errors.Is(err, core.ErrUnroutable):
		r.c.Log().Info("acemq: the requester has gone; its reply was dropped", "type", r.d.Type, "id", r.d.MessageId,
			"correlation_id", r.d.CorrelationId, "reply_to", r.d.ReplyTo)
		return core.Accept()
	default:
		return core.Retry(fmt.Errorf("could not send the reply to %q: %w", r.d.ReplyTo, err))
	}
}

// RequesterWaiting (package runtime's Connection.RequesterWaiting)
// reports whether the requester behind replyTo (a request's reply_to,
// Envelope.ReplyTo) is still there: for a direct
// reply-to address, whether its channel is open; for a reply queue,
// whether the queue exists. It is RabbitMQ's own advice, a passive declare
// of the name on a channel of its own, one round trip: worth it before
// expensive work, not before every cheap reply. false with a nil error
// means gone.
func RequesterWaiting(ctx context.Context, c Conn, replyTo string) (bool, error) {
	if replyTo == "" {
		return false, nil
	}
	cc, err := c.CallChannel(ctx)
	if err != nil {
		return false, err
	}
	err = cc.Do(ctx, "queue.declare", func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclarePassive(replyTo, false, false, false, false, nil)
		return err
	})
	if amqpx.IsNotFound(err) {
		return false, nil // the 404 closed the channel
	}
	cc.Close(ctx)
	if err != nil {
		return false, fmt.Errorf("check the requester %q: %w", replyTo, err)
	}
	return true, nil
}

// AllowReplyTo is rule widened by names (WithReplyToAllowed): each a
// queue's name, or, ending in "*", a prefix; rule is not changed.
func AllowReplyTo(rule *core.ReplyToRule, names []string) *core.ReplyToRule {
	out := &core.ReplyToRule{}
	if rule != nil {
		*out = *rule
		out.Names = slices.Clone(out.Names)
		out.Prefixes = slices.Clone(out.Prefixes)
	}
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); ok {
			out.Prefixes = append(out.Prefixes, p)
		} else if n != "" {
			out.Names = append(out.Names, n)
		}
	}
	return out
}
