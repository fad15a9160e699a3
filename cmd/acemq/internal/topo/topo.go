// Package topo reads a manifest's topology and compares it with a live
// broker through the management HTTP API (rabbit-hole): what is missing,
// and what exists with other arguments — the queues RabbitMQ will not
// change once declared.
package topo

import (
	"errors"
	"fmt"
	"github.com/acemq/acemq-go/runtime/wire"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/input"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// Load reads a manifest into its model (every error with file:line:col).
func Load(path string) (*model.Model, error) {
	s, err := input.LoadFile(path)
	if err != nil {
		return nil, err
	}
	f, shapeErr := s.Manifest, s.ParseErr
	if f == nil {
		return nil, shapeErr
	}
	m, err := model.Build(f, s.FS, s.Dir, s.Imports...)
	if shapeErr != nil {
		return nil, shapeErr
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Topology is the runtime topology of a model: what the generated
// Topology() returns.
func Topology(m *model.Model) *runtime.Topology {
	t := runtime.NewTopology()
	for _, e := range m.Exchanges {
		t.Exchange(e.Name, e.Kind)
	}
	for _, q := range m.Queues {
		rq := runtime.Queue{Name: q.Name, Type: q.Type, DeadLetter: q.DeadLetter, DeliveryLimit: q.DeliveryLimit, QuorumRungs: q.QuorumRungs, NativeRetry: q.NativeRetry}
		if q.Retry != nil {
			rq.Retry = q.Retry.Value
		}
		if len(q.Arguments) > 0 {
			rq.Arguments = map[string]any{}
			for _, a := range q.Arguments {
				rq.Arguments[a.Key] = a.Value
			}
		}
		t.Queue(rq)
		for _, b := range q.Bindings {
			t.Bind(q.Name, b.Exchange.Name, b.RoutingKey)
		}
	}
	t.Delay = runtime.QueueType(m.Delay)
	return t
}

// Difference is one way the broker differs from the manifest.
type Difference struct {
	Kind string // exchange, queue or binding
	Name string
	// Missing: the broker has none. Otherwise Argument names what differs
	// (an x-argument, "type" or "durable") with both values.
	Missing        bool
	Argument       string
	Broker, Wanted any
	// Binding only.
	Exchange, RoutingKey string
	// Extra: the broker has it and the manifest does not declare it
	// (Extras); Messages is an extra queue's depth.
	Extra    bool
	Messages int
}

func (d Difference) String() string {
	if d.Extra {
		if d.Kind == "binding" {
			return fmt.Sprintf("extra binding %s ← %s (routing key %q)", d.Name, d.Exchange, d.RoutingKey)
		}
		return fmt.Sprintf("extra %s %s (%d %s)", d.Kind, d.Name, d.Messages, plural(d.Messages, "message", "messages"))
	}
	if d.Kind == "binding" {
		return fmt.Sprintf("missing binding %s ← %s (routing key %q)", d.Name, d.Exchange, d.RoutingKey)
	}
	if d.Missing {
		return fmt.Sprintf("missing %s %s", d.Kind, d.Name)
	}
	return fmt.Sprintf("%s %s: %s is %s on the broker, %s in the manifest", d.Kind, d.Name, d.Argument, show(d.Broker), show(d.Wanted))
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// Diff compares every declaration of t with the broker behind c (vhost).
// A queue without x-queue-type is classic, as the broker says on 4.x.
func Diff(c *rabbithole.Client, vhost string, t *runtime.Topology) ([]Difference, error) {
	decls, err := t.Declarations()
	if err != nil {
		return nil, err
	}
	var out []Difference
	for _, e := range decls.Exchanges {
		ex, err := c.GetExchange(vhost, e.Name)
		if isNotFound(err) {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Missing: true})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("exchange %s: %w", e.Name, err)
		}
		if ex.Type != e.Kind {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Argument: "type", Broker: ex.Type, Wanted: e.Kind})
		}
		if !ex.Durable {
			out = append(out, Difference{Kind: "exchange", Name: e.Name, Argument: "durable", Broker: false, Wanted: true})
		}
		out = append(out, args("exchange", e.Name, ex.Arguments, e.Arguments)...)
	}
	for _, d := range decls.Queues {
		q, err := c.GetQueue(vhost, d.Name)
		if isNotFound(err) {
			out = append(out, Difference{Kind: "queue", Name: d.Name, Missing: true})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", d.Name, err)
		}
		if !q.Durable {
			out = append(out, Difference{Kind: "queue", Name: d.Name, Argument: "durable", Broker: false, Wanted: true})
		}
		out = append(out, args("queue", d.Name, queueArgs(q.Arguments), queueArgs(d.Arguments))...)
	}
	bindings := map[string][]rabbithole.BindingInfo{}
	for _, b := range decls.Bindings {
		bs, seen := bindings[b.Queue]
		if !seen {
			bs, err = c.ListQueueBindings(vhost, b.Queue)
			if err != nil && !isNotFound(err) {
				return nil, fmt.Errorf("bindings of %s: %w", b.Queue, err)
			}
			bindings[b.Queue] = bs
		}
		if !slices.ContainsFunc(bs, func(x rabbithole.BindingInfo) bool {
			return x.Source == b.Exchange && x.RoutingKey == b.RoutingKey
		}) {
			out = append(out, Difference{Kind: "binding", Name: b.Queue, Missing: true, Exchange: b.Exchange, RoutingKey: b.RoutingKey})
		}
	}
	more, err := diffExchangeBindings(c, vhost, decls.ExchangeBindings)
	return append(out, more...), err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Roots are the names the manifest's queues live under: each queue's name
// up to its last dot ("orders." for orders.new), or a name without a dot
// and what follows it ("inventory", "inventory.").
func Roots(m *model.Model) []string {
	seen := map[string]bool{}
	var out []string
	for _, q := range m.Queues {
		roots := []string{q.Name, q.Name + "."}
		if i := strings.LastIndexByte(q.Name, '.'); i > 0 {
			roots = []string{q.Name[:i+1]}
		}
		for _, r := range roots {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return out
}

func under(name string, roots []string) bool {
	for _, r := range roots {
		if name == r || strings.HasSuffix(r, ".") && strings.HasPrefix(name, r) {
			return true
		}
	}
	return false
}

// Extras lists what the broker has under the manifest's names that t does
// not declare: queues under roots (not exclusive ones, which go with their
// connection), with their depth; bindings of t's queues from any exchange;
// and bindings from t's exchanges to anything not declared: from the
// manifest's own exchanges (own) to any destination, from the ones it
// shares with other services (acemq.dlx, acemq.retry) to a destination
// under roots. A renamed queue leaves its old queue, its .dlq (with its
// dead letters), .parked and rungs, and its bindings: all listed here.
func Extras(c *rabbithole.Client, vhost string, t *runtime.Topology, roots []string, own []string) ([]Difference, error) {
	decls, err := t.Declarations()
	if err != nil {
		return nil, err
	}
	queues, exchanges := map[string]bool{}, map[string]bool{}
	for _, q := range decls.Queues {
		queues[q.Name] = true
	}
	for _, e := range decls.Exchanges {
		exchanges[e.Name] = true
	}
	type key struct{ source, dest, routingKey string }
	bound := map[key]bool{}
	for _, b := range decls.Bindings {
		bound[key{b.Exchange, b.Queue, b.RoutingKey}] = true
	}
	listed, err := c.ListQueuesWithParametersIn(vhost, url.Values{"columns": {"name,messages,exclusive"}})
	if err != nil {
		return nil, fmt.Errorf("queues: %w", err)
	}
	var out []Difference
	for _, q := range listed {
		if !queues[q.Name] && !q.Exclusive && under(q.Name, roots) {
			out = append(out, Difference{Kind: "queue", Name: q.Name, Extra: true, Messages: q.Messages})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	ownSet := map[string]bool{}
	for _, e := range own {
		ownSet[e] = true
	}
	var bindings []Difference
	seen := map[key]bool{}
	add := func(b rabbithole.BindingInfo) {
		k := key{b.Source, b.Destination, b.RoutingKey}
		if b.Source == "" || bound[k] || seen[k] {
			return
		}
		seen[k] = true
		bindings = append(bindings, Difference{Kind: "binding", Name: b.Destination, Extra: true, Exchange: b.Source, RoutingKey: b.RoutingKey})
	}
	for _, e := range decls.Exchanges {
		bs, err := c.ListExchangeBindingsWithSource(vhost, e.Name)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bindings of %s: %w", e.Name, err)
		}
		for _, b := range bs {
			if ownSet[e.Name] || queues[b.Destination] || under(b.Destination, roots) {
				add(b)
			}
		}
	}
	for _, q := range decls.Queues {
		bs, err := c.ListQueueBindings(vhost, q.Name)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bindings of %s: %w", q.Name, err)
		}
		for _, b := range bs {
			add(b)
		}
	}
	sort.Slice(bindings, func(i, j int) bool {
		a, b := bindings[i], bindings[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Exchange != b.Exchange {
			return a.Exchange < b.Exchange
		}
		return a.RoutingKey < b.RoutingKey
	})
	return append(out, bindings...), nil
}

// queueArgs is a queue's arguments with the type made explicit: absent is
// classic.
func queueArgs(a map[string]any) map[string]any {
	out := map[string]any{wire.ArgQueueType: "classic"}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// args lists the arguments that differ between the broker's and the
// manifest's, in name order. Numbers compare by value (JSON gives float64).
func args(kind, name string, broker, wanted map[string]any) []Difference {
	keys := map[string]bool{}
	for k := range broker {
		keys[k] = true
	}
	for k := range wanted {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Difference
	for _, k := range names {
		b, w := broker[k], wanted[k]
		if !same(b, w) {
			out = append(out, Difference{Kind: kind, Name: name, Argument: k, Broker: b, Wanted: w})
		}
	}
	return out
}

func same(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func isNotFound(err error) bool {
	var e rabbithole.ErrorResponse
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

// Conflicts are the differences that Declare cannot fix: something exists
// with other arguments. The rest (missing things) Declare creates; extras
// are not conflicts (Declare leaves them alone).
func Conflicts(diffs []Difference) []Difference {
	var out []Difference
	for _, d := range diffs {
		if !d.Missing && !d.Extra {
			out = append(out, d)
		}
	}
	return out
}

// Summary counts a topology's declarations: "3 exchanges, 4 queues, 3 bindings".
func Summary(t *runtime.Topology) string {
	d, err := t.Declarations()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d exchanges, %d queues, %d bindings", len(d.Exchanges), len(d.Queues), len(d.Bindings))
}

// Lines renders differences one a line; those of the delay topology are
// grouped (DelayLines).
func Lines(diffs []Difference) string {
	var b strings.Builder
	diffs, delay := SplitDelay(diffs)
	for _, l := range DelayLines(delay) {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for _, d := range diffs {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}
