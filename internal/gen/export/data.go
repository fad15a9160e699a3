package export

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/internal/gen/export/templates"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

// data is what the text templates are executed with, built from m.
func data(m *model.Model, opts Options) *templates.Data {
	d := &templates.Data{Header: opts.header(), Title: m.Package}
	g := &d.Graph
	node := func(id, label, kind string) {
		g.Nodes = append(g.Nodes, templates.Node{ID: id, Label: label, Kind: kind})
	}
	edge := func(from, to, label, kind string) {
		g.Edges = append(g.Edges, templates.Edge{From: from, To: to, Label: label, Kind: kind})
	}
	line := templates.Line

	exchangeID := map[string]string{}
	for i, x := range m.Exchanges {
		exchangeID[x.Name] = fmt.Sprintf("x%d", i)
		d.Exchanges = append(d.Exchanges, templates.Exchange{Name: x.Name, Kind: x.Kind, From: x.From})
	}
	if len(m.Queues) > 0 {
		d.Exchanges = append(d.Exchanges,
			templates.Exchange{Name: wire.DeadLetterExchange, Kind: "direct", Topology: true},
			templates.Exchange{Name: wire.RetryExchange, Kind: "direct", Topology: true})
	}
	if m.Delay != "" {
		name, about := delayGroup(m)
		d.Exchanges = append(d.Exchanges, templates.Exchange{Name: name, Kind: "topic", Delay: m.Delay, About: about})
	}
	queueID := map[string]string{}
	for i, q := range m.Queues {
		queueID[q.Name] = fmt.Sprintf("q%d", i)
	}

	// Publishers, then the exchanges they and the bindings reach, so that
	// the diagram reads left to right.
	usesDefault := false
	for i, p := range m.Publishers {
		id := fmt.Sprintf("p%d", i)
		node(id, p.GoName, templates.NodePublisher)
		tp := templates.Publisher{Name: p.Name, GoName: p.GoName, Exchange: p.ExchangeName()}
		var ls []string
		for _, pub := range p.Messages {
			tp.Messages = append(tp.Messages, templates.Published{Message: pub.Message.Name, Type: pub.Message.Type, RoutingKey: pub.RoutingKey})
			l := pub.Message.Name
			if pub.RoutingKey != "" {
				l += " (" + pub.RoutingKey + ")"
			}
			ls = append(ls, l)
		}
		d.Publishers = append(d.Publishers, tp)
		to := exchangeID[p.ExchangeName()]
		if p.Exchange == nil {
			to, usesDefault = "xdefault", true
		}
		edge(id, to, strings.Join(ls, line), templates.EdgePublish)
		var delayed []string
		for _, pub := range p.Messages {
			if pub.AfterName != "" {
				delayed = append(delayed, pub.Message.Name+" after a delay")
			}
		}
		if len(delayed) > 0 {
			edge(id, "xdelay", strings.Join(delayed, line), templates.EdgePublish)
		}
	}
	if m.Delay != "" {
		name, _ := delayGroup(m)
		node("xdelay", name+line+fmt.Sprintf("delay topology: %d %s levels", wire.DelayLevels, m.Delay), templates.NodeExchange)
		for _, x := range m.Exchanges {
			edge("xdelay", exchangeID[x.Name], "when due", templates.EdgeRoute)
		}
	}
	for _, x := range m.Exchanges {
		node(exchangeID[x.Name], x.Name+line+x.Kind, templates.NodeExchange)
	}
	if usesDefault {
		node("xdefault", "(default exchange)"+line+"direct to a queue by name", templates.NodeExchange)
		seen := map[string]bool{}
		for _, p := range m.Publishers {
			if p.Exchange != nil {
				continue
			}
			for _, pub := range p.Messages {
				if id, ok := queueID[pub.RoutingKey]; ok && !seen[id] {
					seen[id] = true
					edge("xdefault", id, pub.RoutingKey, templates.EdgeRoute)
				}
			}
		}
	}
	for _, q := range m.Queues {
		for _, b := range q.Bindings {
			label := b.RoutingKey
			if label == "" {
				label = "(no key)"
			}
			edge(exchangeID[b.Exchange.Name], queueID[q.Name], label, templates.EdgeRoute)
		}
	}

	anyDeadLetter := false
	for _, q := range m.Queues {
		id := queueID[q.Name]
		tq := queueData(q)
		d.Queues = append(d.Queues, tq)
		label := q.Name
		if q.Type == runtime.Quorum {
			label += line + fmt.Sprintf("quorum, delivery limit %d", q.DeliveryLimit)
		}
		node(id, label, templates.NodeQueue)
		from := id
		if q.HandlerName != "" {
			from = id + "h"
			node(from, q.HandlerName, templates.NodeHandler)
			var names []string
			for _, c := range q.Consumes {
				names = append(names, c.Name)
			}
			edge(id, from, strings.Join(names, line), templates.EdgeConsume)
		}
		if p := tq.Policy; p != nil {
			var memory []string
			for _, w := range p.Waits {
				if w.Rung == "" {
					memory = append(memory, w.Delay)
				}
			}
			if len(memory) > 0 {
				// The consumer holds the delivery on a timer, then
				// republishes it to the queue with the attempt advanced.
				l := "retry: wait " + strings.Join(dedupe(memory), ", ")
				if p.Jitter != "" {
					l += " " + p.Jitter
				}
				l += line + "in memory"
				edge(from, id, l, templates.EdgeRetryMemory)
			}
		}
		for j, r := range tq.Rungs {
			rid := fmt.Sprintf("%sr%d", id, j)
			node(rid, r.Name+line+"TTL "+r.Delay, templates.NodeRung)
			l := "retry: wait " + r.Delay
			if r.Spill {
				l += line + "past the hold budget"
			}
			edge(from, rid, l, templates.EdgeRetryRung)
			edge(rid, id, "after "+r.Delay, templates.EdgeRungReturn)
		}
		if q.NativeRetry {
			edge(from, id, "requeue, waits in the queue", templates.EdgeRequeue)
		} else if q.RequeueOnFailure {
			edge(from, id, "requeue (reject)", templates.EdgeRequeue)
		}
		node(id+"dlq", tq.DLQ, templates.NodeDLQ)
		node(id+"parked", tq.Parked, templates.NodeParked)
		// A Retry reaches q.dlq too when the attempts run out: with no
		// policy in the manifest, the service's (NoRetry: after 1).
		reason := "gave up, or rejected"
		if q.Retry != nil {
			reason = fmt.Sprintf("gave up after %d attempts, or rejected", q.Retry.Attempts)
		}
		edge(from, id+"dlq", reason, templates.EdgeDeadLetter)
		edge(from, id+"parked", "parked, or undecodable", templates.EdgePark)
		if q.DeadLetter {
			anyDeadLetter = true
			l := "broker dead-letters"
			if q.Type == runtime.Quorum {
				l += line + fmt.Sprintf("(past %d deliveries)", q.DeliveryLimit)
			}
			edge(id, "dlx", l, templates.EdgeBrokerDeadLetter)
			edge("dlx", id+"dlq", tq.DLQ, templates.EdgeBrokerDeadLetter)
		}
	}
	if anyDeadLetter {
		node("dlx", wire.DeadLetterExchange+line+"direct", templates.NodeDLX)
	}
	// The replies: from each handler answering a request back to each
	// publisher that sends it, after every other edge (Mermaid's
	// linkStyle counts edges in order).
	for _, q := range m.Queues {
		if q.HandlerName == "" {
			continue
		}
		for _, c := range q.Consumes {
			if c.Reply == nil {
				continue
			}
			for i, p := range m.Publishers {
				for _, pub := range p.Messages {
					if pub.Message == c {
						edge(queueID[q.Name]+"h", fmt.Sprintf("p%d", i), c.Reply.Name+" (reply to "+c.Name+")"+line+"to its reply_to", templates.EdgeReply)
					}
				}
			}
		}
	}
	return d
}

func queueData(q *model.Queue) templates.Queue {
	tq := templates.Queue{
		Name:             q.Name,
		Type:             string(q.Type),
		Handler:          q.HandlerName,
		RequeueOnFailure: q.RequeueOnFailure,
		NativeRetry:      q.NativeRetry,
		DeadLetter:       q.DeadLetter,
		DeliveryLimit:    q.DeliveryLimit,
		DLQ:              wire.DeadLetterQueue(q.Name),
		Parked:           wire.ParkedQueue(q.Name),
	}
	for _, a := range q.Arguments {
		tq.Arguments = append(tq.Arguments, templates.Argument{Key: a.Key, Value: fmt.Sprint(a.Value)})
	}
	for _, b := range q.Bindings {
		tq.Bindings = append(tq.Bindings, templates.Binding{Exchange: b.Exchange.Name, RoutingKey: b.RoutingKey})
	}
	for _, c := range q.Consumes {
		tc := templates.Consumed{Name: c.Name, Type: c.Type, Format: formatName(c), Schema: c.SchemaPath}
		if c.Reply != nil {
			tc.Reply, tc.ReplyType = c.Reply.Name, c.Reply.Type
		}
		tq.Consumes = append(tq.Consumes, tc)
	}
	if q.Retry == nil {
		return tq
	}
	p := q.Retry
	v := p.Value
	tp := &templates.Policy{Name: p.Name, Attempts: v.Attempts(), Shape: shape(p)}
	if j := v.Jitter(); j > 0 {
		tp.Jitter = "±" + strconv.FormatFloat(j*100, 'f', -1, 64) + "%"
	}
	if age := v.GiveUpAfter(); age > 0 {
		tp.GiveUpAfter = short(age)
	}
	if t := v.WaitInBrokerFrom(); t > 0 {
		tp.Threshold = short(t)
	}
	sched := v.Schedule()
	for i := 0; i < len(sched); {
		j := i
		for j+1 < len(sched) && sched[j+1] == sched[i] {
			j++
		}
		w := templates.Wait{After: strconv.Itoa(i + 1), Delay: short(sched[i])}
		if j > i {
			w.After = fmt.Sprintf("%d–%d", i+1, j+1)
		}
		if q.NativeRetry {
			w.Rung = q.Name // the queue itself holds it
		} else if wire.InBroker(sched[i], v.WaitInBrokerFrom()) {
			w.Rung = wire.RungQueue(q.Name, sched[i])
		} else if r, ok := wire.SpillRung(sched[i], v.WaitInBrokerFrom()); ok {
			w.Spill = wire.RungQueue(q.Name, r)
		}
		tp.Waits = append(tp.Waits, w)
		i = j + 1
	}
	tq.Policy = tp
	if q.NativeRetry {
		return tq
	}
	broker := wire.BrokerRungs(wire.Waits(v.Attempts(), v.Delay), v.WaitInBrokerFrom())
	for _, r := range wire.Rungs(wire.Waits(v.Attempts(), v.Delay), v.WaitInBrokerFrom()) {
		tq.Rungs = append(tq.Rungs, templates.Rung{Name: wire.RungQueue(q.Name, r), Delay: short(r), Quorum: q.QuorumRungs,
			Spill: !slices.Contains(broker, r)})
	}
	return tq
}

// shape says what kind of policy p is, in a few words.
func shape(p *model.Policy) string {
	v := p.Value
	if p.Kind == model.Fixed {
		return fmt.Sprintf("fixed, %d attempts, %s apart", v.Attempts(), short(p.Initial))
	}
	m := strconv.FormatFloat(v.Multiplier(), 'f', -1, 64)
	return fmt.Sprintf("exponential, %d attempts, %s ×%s up to %s", v.Attempts(), short(p.Initial), m, short(p.Max))
}

func formatName(m *model.Message) string {
	if m.Format == schema.Avro {
		return "Avro"
	}
	return "JSON Schema"
}

// short prints a duration without zero units: 5m, not 5m0s.
func short(d time.Duration) string {
	s := d.String()
	for _, z := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, z) && len(s) > len(z) {
			s = s[:len(s)-len(z)+1]
		}
	}
	return s
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
