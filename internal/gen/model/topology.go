package model

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/manifest"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

func (b *builder) exchanges() {
	b.exchangeByName = map[string]*Exchange{}
	for _, me := range b.file.Exchanges {
		name := me.Name.Value
		switch {
		case name == "":
			b.errorf(me.Name.Pos, "an exchange needs a name (the default exchange is never declared)")
		case strings.HasPrefix(name, "amq."):
			b.errorf(me.Name.Pos, "exchange %q: names starting with amq. are reserved by RabbitMQ; choose another", name)
		case name == wire.DeadLetterExchange || name == wire.RetryExchange:
			b.errorf(me.Name.Pos, "exchange %q is declared by the topology itself for dead letters and retries; choose another name", name)
		}
		x := &Exchange{Name: name, Kind: me.Type.Value}
		b.exchangeByName[name] = x
		b.m.Exchanges = append(b.m.Exchanges, x)
	}
}

func (b *builder) queues() {
	names := queueNames(b.file)
	for _, mq := range b.file.Queues {
		who := fmt.Sprintf("queue %q", mq.Name.Value)
		q := &Queue{Name: mq.Name.Value, Type: runtime.Classic}
		b.checkQueueName(who, mq, names)
		q.GoName = b.baseName(who, mq.Name, mq.GoName)
		if mq.Type != nil {
			q.Type = runtime.QueueType(mq.Type.Value)
		}
		q.DeadLetter = mq.DeadLetter != nil && mq.DeadLetter.Value
		q.RequeueOnFailure = mq.RequeueOnFailure != nil && mq.RequeueOnFailure.Value
		q.QuorumRungs = mq.Rungs != nil && mq.Rungs.Type != nil && mq.Rungs.Type.Value == "quorum"
		q.Inbox = b.inbox(who, mq.Inbox)
		if mq.Retry != nil {
			if q.Retry = b.policyByName[mq.Retry.Value]; q.Retry == nil {
				b.errorf(mq.Retry.Pos, "%s retries with %q%s", who, mq.Retry.Value, unknown("policy", "policies", mq.Retry.Value, b.policyNames()))
			}
		}
		for _, mb := range mq.Bindings {
			x := b.exchangeByName[mb.Exchange.Value]
			if x == nil {
				if b.perhapsImported(mb.Exchange.Value, b.exchangeNames()) {
					continue
				}
				b.errorf(mb.Exchange.Pos, "%s binds to the exchange %q%s", who, mb.Exchange.Value, unknown("exchange", "exchanges", mb.Exchange.Value, b.exchangeNames()))
				continue
			}
			bd := &Binding{Exchange: x}
			if mb.RoutingKey != nil {
				bd.RoutingKey = mb.RoutingKey.Value
			}
			q.Bindings = append(q.Bindings, bd)
		}
		for _, c := range mq.Consumes {
			m := b.messageByName[c.Value]
			if m == nil {
				if b.offered[c.Value] != nil || b.perhapsImported(c.Value, b.messageNames()) {
					continue // from an imported manifest with errors of its own, reported at it
				}
				b.errorf(c.Pos, "%s consumes %q%s", who, c.Value, unknown("message", "messages", c.Value, b.messageNames()))
				continue
			}
			if m.Reply != nil && mq.Inbox != nil {
				b.errorf(c.Pos, "%s has an inbox and consumes the request %q: a request's handler returns its reply, not in a transaction; give the request a queue without inbox:", who, c.Value)
			}
			q.Consumes = append(q.Consumes, m)
		}
		b.queueArguments(who, mq, q)
		b.nativeRetry(who, mq, q)
		b.deliveryLimit(who, mq, q)
		if len(mq.Consumes) > 0 && q.GoName != "" {
			q.HandlerName, q.ConsumeName = q.GoName+"Handler", "Consume"+q.GoName
			ok := b.ns.claim(q.HandlerName, who+" (its handler interface)", mq.Name.Pos) &&
				b.ns.claim(q.ConsumeName, who+" (its consume function)", mq.Name.Pos)
			if ok && len(q.Consumes) == 1 {
				q.HandlerFuncName = q.HandlerName + "Func"
				b.ns.claim(q.HandlerFuncName, who+" (its handler func type)", mq.Name.Pos)
			}
		}
		b.m.Queues = append(b.m.Queues, q)
	}
}

// nativeRetry reads retry_in_broker: native, the quorum queue holding a
// failed message itself (RabbitMQ 4.3's x-delayed-retry-*): only where the
// broker's delay, min(min × failures, max), is the policy's schedule
// exactly, checked with the runtime's own arithmetic
// (wire.NativeRetry). Its consumers requeue each failure.
func (b *builder) nativeRetry(who string, mq *manifest.Queue, q *Queue) {
	r := mq.RetryInBroker
	if r == nil || r.Value != "native" {
		return
	}
	at := r.Pos
	switch {
	case q.Type != runtime.Quorum:
		b.errorf(at, "%s: retry_in_broker: native is a quorum queue's (RabbitMQ %s's delayed retry, x-delayed-retry-*); write type: quorum, or remove retry_in_broker (rungs)", who, wire.NativeRetryBroker)
		return
	case mq.Retry == nil:
		b.errorf(at, "%s: retry_in_broker: native delays the waits of a retry policy, and the queue names none; add retry: <policy>, or remove retry_in_broker", who)
		return
	case mq.Rungs != nil:
		b.errorf(mq.Rungs.Pos, "%s: retry_in_broker: native declares no rungs; remove rungs:", who)
		return
	case mq.RequeueOnFailure != nil && !mq.RequeueOnFailure.Value:
		b.errorf(mq.RequeueOnFailure.Pos, "%s: retry_in_broker: native requeues each failure for the queue to delay it; remove requeue_on_failure: false", who)
		return
	case q.Retry == nil:
		return // an unknown policy, reported at retry:
	}
	if _, _, err := wire.NativeRetry(q.Retry.Value.Schedule(), q.Retry.Value.Jitter()); err != nil {
		where := ""
		for _, mp := range b.file.Policies {
			if mp.Name.Value == q.Retry.Name && (mp.Exponential != nil || mp.Fixed != nil) {
				p := policyPos(mp)
				where = fmt.Sprintf(" (%s:%d:%d)", b.file.Path, p.Line, p.Col)
			}
		}
		b.errorf(at, "%s: retry_in_broker: native cannot give policy %q%s exactly: %v", who, q.Retry.Name, where, err)
		return
	}
	q.NativeRetry, q.RequeueOnFailure = true, true
}

// deliveryLimit gives a quorum queue its explicit x-delivery-limit and its
// dead-letter target: past the limit the broker dead-letters a message,
// and drops one it has nowhere to send.
func (b *builder) deliveryLimit(who string, mq *manifest.Queue, q *Queue) {
	if q.Type != runtime.Quorum {
		if mq.DeliveryLimit != nil {
			b.errorf(mq.DeliveryLimit.Pos, "%s: delivery_limit applies to quorum queues only (a classic queue counts no deliveries); remove it, or write type: quorum", who)
		}
		return
	}
	q.DeliveryLimit = wire.DefaultDeliveryLimit
	if mq.DeliveryLimit != nil {
		q.DeliveryLimit = mq.DeliveryLimit.Value
	}
	if mq.DeadLetter != nil && !mq.DeadLetter.Value {
		b.errorf(mq.DeadLetter.Pos, "%s: a quorum queue must dead-letter: past its delivery limit (%d) the broker drops a message it has nowhere to send; remove dead_letter: false (a quorum queue dead-letters to %s by default)",
			who, q.DeliveryLimit, wire.DeadLetterQueue(q.Name))
	}
	q.DeadLetter = true
	// requeue_on_failure spends one delivery per failed attempt but the
	// last, counted by the runtime; the broker must not cut it short.
	if q.RequeueOnFailure && q.Retry != nil && q.Retry.Attempts > q.DeliveryLimit {
		var at manifest.Pos
		what := "requeue_on_failure"
		if q.NativeRetry { // it requeues each failure
			what = "retry_in_broker: native"
		}
		switch {
		case mq.DeliveryLimit != nil:
			at = mq.DeliveryLimit.Pos
		case mq.RequeueOnFailure != nil:
			at = mq.RequeueOnFailure.Pos
		default:
			at = mq.RetryInBroker.Pos
		}
		b.errorf(at, "%s: "+what+" makes each of policy %q's %d attempts a delivery the broker counts, but the delivery limit is %d: the broker would dead-letter the message before the runtime gives up, without the runtime's reason; write delivery_limit: %d or more",
			who, q.Retry.Name, q.Retry.Attempts, q.DeliveryLimit, q.Retry.Attempts)
	}
}

func queueNames(f *manifest.File) map[string]bool {
	out := map[string]bool{}
	for _, q := range f.Queues {
		out[q.Name.Value] = true
	}
	return out
}

// checkQueueName refuses names the wire contract gives to the queues the
// topology derives from another queue of the manifest.
func (b *builder) checkQueueName(who string, mq *manifest.Queue, names map[string]bool) {
	name := mq.Name.Value
	if name == "" {
		b.errorf(mq.Name.Pos, "a queue needs a name")
		return
	}
	if strings.HasPrefix(name, "amq.") {
		b.errorf(mq.Name.Pos, "%s: names starting with amq. are reserved by RabbitMQ; choose another", who)
	}
	if base, kind, ok := wire.Owner(name); ok && kind != wire.Rung && names[base] {
		b.errorf(mq.Name.Pos, "%s is the %s queue the topology declares for queue %q; remove it (or rename it)", who, kind, base)
	}
	if base, _, ok := strings.Cut(name, wire.RungInfix); ok && names[base] {
		b.errorf(mq.Name.Pos, "%s looks like a retry rung of queue %q, which the topology declares; rename it", who, base)
	}
}

// managedArguments are the x-arguments the manifest sets through its own
// keys; writing them under arguments: would contradict those.
var managedArguments = map[string]string{
	wire.ArgQueueType:            "type: classic or quorum",
	wire.ArgDeadLetterExchange:   "dead_letter: true",
	wire.ArgDeadLetterRoutingKey: "dead_letter: true",
	wire.ArgDeliveryLimit:        "delivery_limit: N (quorum queues)",
}

func (b *builder) queueArguments(who string, mq *manifest.Queue, q *Queue) {
	for _, a := range mq.Arguments {
		if instead, ok := managedArguments[a.Key.Value]; ok {
			b.errorf(a.Key.Pos, "%s: argument %s is set by the topology; write %s instead", who, a.Key.Value, instead)
			continue
		}
		v := a.Value
		if n, ok := v.(int64); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			v = int(n) // AMQP writes an int as 32 bits; a larger one stays int64
		}
		q.Arguments = append(q.Arguments, &Argument{Key: a.Key.Value, Value: v})
	}
}

func (b *builder) publishers() {
	queues := queueNames(b.file)
	for _, mp := range b.file.Publishers {
		who := fmt.Sprintf("publisher %q", mp.Name.Value)
		p := &Publisher{Name: mp.Name.Value, Outbox: mp.Outbox != nil && mp.Outbox.Value}
		if base := b.baseName(who, mp.Name, mp.GoName); base != "" {
			p.GoName, p.NewName = base+"Publisher", "New"+base+"Publisher"
			_ = b.ns.claim(p.GoName, who, mp.Name.Pos) &&
				b.ns.claim(p.NewName, who+" (its constructor)", mp.Name.Pos)
			if p.Outbox {
				p.OutboxName, p.NewOutboxName = base+"Outbox", "New"+base+"Outbox"
				_ = b.ns.claim(p.OutboxName, who+" (its outbox)", mp.Outbox.Pos) &&
					b.ns.claim(p.NewOutboxName, who+" (its outbox's constructor)", mp.Outbox.Pos)
			}
		}
		if mp.Exchange != nil && mp.Exchange.Value != "" {
			if p.Exchange = b.exchangeByName[mp.Exchange.Value]; p.Exchange == nil && !b.perhapsImported(mp.Exchange.Value, b.exchangeNames()) {
				b.errorf(mp.Exchange.Pos, "%s publishes to the exchange %q%s", who, mp.Exchange.Value, unknown("exchange", "exchanges", mp.Exchange.Value, b.exchangeNames()))
			}
		}
		methods, txMethods := map[string]methodClaim{}, map[string]methodClaim{}
		for _, pm := range mp.Messages {
			m := b.messageByName[pm.Message.Value]
			if m == nil {
				if b.offered[pm.Message.Value] != nil || b.perhapsImported(pm.Message.Value, b.messageNames()) {
					continue // from an imported manifest with errors of its own, reported at it
				}
				b.errorf(pm.Message.Pos, "%s publishes %q%s", who, pm.Message.Value, unknown("message", "messages", pm.Message.Value, b.messageNames()))
				continue
			}
			pub := b.published(who, methods, pm, m)
			p.Requests = p.Requests || pub.RequestName != ""
			if p.Outbox && pub.RequestName == "" {
				pub.TxName = "Publish" + m.GoName + "Tx"
				b.claimMethod(who, txMethods, pub.TxName, pm.Message, " (its outbox method)")
			}
			if pm.RoutingKey != nil {
				pub.RoutingKey = pm.RoutingKey.Value
			}
			if mp.Exchange == nil || mp.Exchange.Value == "" {
				b.checkDefaultRoute(who, pm, queues)
			}
			if pm.Delay != nil && pm.Delay.Value {
				b.delayed(who, methods, txMethods, p, mp, pm, pub)
			}
			p.Messages = append(p.Messages, pub)
		}
		b.m.Publishers = append(b.m.Publishers, p)
	}
}

// published names the methods of a publisher for one message: Publish,
// its Batch and Async forms, or, for a request, Request alone (a request
// published without waiting has no reply_to, and is parked).
func (b *builder) published(who string, methods map[string]methodClaim, pm *manifest.Published, m *Message) *Published {
	if m.Reply != nil {
		pub := &Published{Message: m, RequestName: "Request" + m.GoName}
		b.claimMethod(who, methods, pub.RequestName, pm.Message, " (its request method)")
		return pub
	}
	pub := &Published{Message: m, Method: "Publish" + m.GoName, BatchName: "Publish" + m.GoName + "Batch", AsyncName: "Publish" + m.GoName + "Async"}
	b.claimMethod(who, methods, pub.Method, pm.Message, "")
	b.claimMethod(who, methods, pub.BatchName, pm.Message, " (its batch method)")
	b.claimMethod(who, methods, pub.AsyncName, pm.Message, " (its async method)")
	return pub
}

// methodClaim is the message of a publisher whose method took a name.
type methodClaim struct {
	message string
	what    string
	pos     manifest.Pos
}

// claimMethod takes the method name of a publisher for a message, or
// reports the clash: messages Order and OrderBatch would both give
// PublishOrderBatch.
func (b *builder) claimMethod(who string, methods map[string]methodClaim, name string, msg manifest.Str, what string) {
	if prev, ok := methods[name]; ok {
		b.errorf(msg.Pos, "%s: message %q%s and message %q%s (%s:%d:%d) both become the method %s; set go_name on one of the messages",
			who, msg.Value, what, prev.message, prev.what, b.file.Path, prev.pos.Line, prev.pos.Col, name)
		return
	}
	methods[name] = methodClaim{message: msg.Value, what: what, pos: msg.Pos}
}

// checkDefaultRoute: through the default exchange, the routing key is the
// name of the queue the message goes to.
func (b *builder) checkDefaultRoute(who string, pm *manifest.Published, queues map[string]bool) {
	if pm.RoutingKey == nil || pm.RoutingKey.Value == "" {
		b.errorf(pm.Message.Pos, "%s has no exchange, so %s needs routing_key: the name of the queue it goes to", who, pm.Message.Value)
		return
	}
	if rk := pm.RoutingKey.Value; !queues[rk] {
		known := slices.Sorted(maps.Keys(queues))
		b.errorf(pm.RoutingKey.Pos, "%s publishes %s through the default exchange to the queue %q%s",
			who, pm.Message.Value, rk, unknown("queue", "queues", rk, known))
	}
}

func (b *builder) policyNames() []string {
	var out []string
	for _, p := range b.file.Policies {
		out = append(out, p.Name.Value)
	}
	return out
}

// messageNames are the messages this manifest declares, then those it
// imports.
func (b *builder) messageNames() []string {
	var out []string
	for _, m := range b.file.Messages {
		out = append(out, m.Name.Value)
	}
	return append(out, slices.Sorted(maps.Keys(b.offered))...)
}

// exchangeNames are the exchanges this manifest declares, then those it
// imports.
func (b *builder) exchangeNames() []string {
	var out []string
	for _, x := range b.file.Exchanges {
		out = append(out, x.Name.Value)
	}
	for _, n := range slices.Sorted(maps.Keys(b.offeredExchanges)) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// inbox is a queue's inbox: block (nil without one).
func (b *builder) inbox(who string, mi *manifest.Inbox) *Inbox {
	if mi == nil {
		return nil
	}
	in := &Inbox{}
	if mi.Retention != nil {
		if in.Retention = b.duration(who, "inbox retention", *mi.Retention); in.Retention <= 0 && mi.Retention.Value != "" {
			b.errorf(mi.Retention.Pos, "%s: inbox retention %q must be positive", who, mi.Retention.Value)
		}
	}
	return in
}
