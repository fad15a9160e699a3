package emit

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// topologyFile emits
//
//	func Topology() *runtime.Topology {
//		return runtime.NewTopology().
//			Exchange("orders", "topic").
//			Queue(runtime.Queue{Name: "orders.new", ...}).
//			Bind("orders.new", "orders", "order.created")
//	}
func topologyFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	f.Comment("Topology is every exchange, queue and binding of the manifest, with each")
	f.Comment("queue's dead-letter queue, parked queue and retry rungs. Declare it with")
	f.Comment("(*runtime.Connection).Declare; declaring it again changes nothing.")
	if m.Delay != "" {
		doc(f.Comment, "A publisher delays a message (delay: true), so it declares the delay topology too, with %s levels (runtime.WithDelay): the same for every service on the broker.", m.Delay)
	}
	for _, x := range m.Exchanges {
		if x.From != "" {
			f.Comment("")
			doc(f.Comment, "The exchange %q is declared by %q, which the manifest imports; it is declared here too, of the same kind, so that either service may start first.", x.Name, x.From)
		}
	}
	chain := rt("NewTopology").Call()
	link := func(method string, args ...jen.Code) {
		chain = chain.Op(".").Line().Id(method).Call(args...)
	}
	for _, x := range m.Exchanges {
		link("Exchange", jen.Lit(x.Name), jen.Lit(x.Kind))
	}
	for _, q := range m.Queues {
		link("Queue", queueLiteral(q))
	}
	for _, q := range m.Queues {
		for _, b := range q.Bindings {
			link("Bind", jen.Lit(q.Name), jen.Lit(b.Exchange.Name), jen.Lit(b.RoutingKey))
		}
	}
	if m.Delay == "" {
		f.Func().Id("Topology").Params().Op("*").Add(rt("Topology")).Block(jen.Return(chain))
	} else {
		// The delay topology (delay: true on a publisher message): its
		// levels' queue type.
		level := rt("Classic")
		if m.Delay == "quorum" {
			level = rt("Quorum")
		}
		f.Func().Id("Topology").Params().Op("*").Add(rt("Topology")).Block(
			jen.Id("t").Op(":=").Add(chain),
			jen.Id("t").Dot("Delay").Op("=").Add(level),
			jen.Return(jen.Id("t")),
		)
	}
	if m.TablePrefix != "" {
		f.Line()
		tablePrefixConst(f, m)
	}
	return f
}

// queueLiteral emits runtime.Queue{Name: ..., Type: ..., ...}, one field a
// line, in the runtime struct's order, leaving out zero values.
func queueLiteral(q *model.Queue) jen.Code {
	return rt("Queue").ValuesFunc(func(g *jen.Group) {
		field := func(name string, v jen.Code) { g.Line().Id(name).Op(":").Add(v) }
		field("Name", jen.Lit(q.Name))
		if q.Type == "quorum" {
			field("Type", rt("Quorum"))
		} else {
			field("Type", rt("Classic"))
		}
		if q.DeadLetter {
			field("DeadLetter", jen.True())
		}
		if q.DeliveryLimit > 0 {
			field("DeliveryLimit", jen.Lit(q.DeliveryLimit))
		}
		if q.Retry != nil {
			field("Retry", jen.Id(q.Retry.VarName))
		}
		if q.QuorumRungs {
			field("QuorumRungs", jen.True())
		}
		if q.NativeRetry {
			field("NativeRetry", jen.True())
		}
		if len(q.Arguments) > 0 {
			field("Arguments", arguments(q.Arguments))
		}
		g.Line()
	})
}

// arguments emits map[string]any{"x-max-length": 1000, ...}, in manifest order.
func arguments(args []*model.Argument) jen.Code {
	return jen.Map(jen.String()).Any().ValuesFunc(func(g *jen.Group) {
		for _, a := range args {
			g.Line().Lit(a.Key).Op(":").Lit(a.Value)
		}
		g.Line()
	})
}

// tablePrefixConst emits the manifest's table_prefix: as TablePrefix.
func tablePrefixConst(f *jen.File, m *model.Model) {
	doc(f.Comment, "TablePrefix is the manifest's table_prefix: pgstore's tables of this service are %sinbox and %soutbox. Make the inbox, the outbox and their tables with pgstore.WithPrefix(TablePrefix) (pgstore.Migrate, NewInbox, NewOutbox; acemq sql --prefix %s): the generated Consume functions and Publish...Tx methods refuse another.",
		m.TablePrefix, m.TablePrefix, m.TablePrefix)
	f.Const().Id("TablePrefix").Op("=").Lit(m.TablePrefix)
}

// prefixCheck is the check that store (inbox or ob, a pgstore store) was
// made with the manifest's table_prefix, when it has one: an error from
// who otherwise.
func prefixCheck(m *model.Model, who, store, ret string) []jen.Code {
	if m.TablePrefix == "" {
		return nil
	}
	table := map[string]string{"inbox": "inbox", "ob": "outbox"}[store]
	msg := fmt.Sprintf("%s: the %s is not on the manifest's table %s%s: make it with pgstore.WithPrefix(TablePrefix)", who, table, m.TablePrefix, table)
	var r jen.Code = jen.Return(jen.Qual(errorsPkg, "New").Call(litFit(2, "return errors.New(", msg)))
	if ret == "nil" {
		r = jen.Return(jen.Nil(), jen.Qual(errorsPkg, "New").Call(litFit(2, "return nil, errors.New(", msg)))
	}
	return []jen.Code{jen.If(jen.Id(storeExpr(store)).Dot("Prefix").Call().Op("!=").Id("TablePrefix")).Block(r)}
}

func storeExpr(store string) string {
	if store == "ob" {
		return "p.ob"
	}
	return store
}
