package emit

import (
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// delayArg is a delayed method's delay parameter and the expression that
// gives runtime.WithDelay its duration: d, or t and time.Until(t).
func delayArg(at bool) (param, delay jen.Code) {
	if at {
		return jen.Id("t").Qual(timePkg, "Time"), jen.Qual(timePkg, "Until").Call(jen.Id("t"))
	}
	return jen.Id("d").Qual(timePkg, "Duration"), jen.Id("d")
}

// delayNote is what a delayed method says of when its message arrives.
func delayNote(at bool) string {
	if at {
		return "to be delivered at t (runtime.WithDelay of the time until t, rounded up to whole seconds; a t in the past publishes at once)"
	}
	return "to be delivered d from now (runtime.WithDelay: rounded up to whole seconds; a d of zero or less publishes at once)"
}

// delayName is the method's name, After or At.
func delayName(pm *model.Published, at, tx bool) string {
	switch {
	case at && tx:
		return pm.AtTxName
	case tx:
		return pm.AfterTxName
	case at:
		return pm.AtName
	}
	return pm.AfterName
}

// delayCall is a delayed method's body: fn with lead, then v and the
// options append([]runtime.PublishOption{runtime.WithRoutingKey(key),
// runtime.WithDelay(delay)}, opts...) (opts last, so a WithRoutingKey among
// them wins):
//
//	return runtime.Publish(ctx, p.c, orderPlacedType, "orders", m, append([]runtime.PublishOption{runtime.WithRoutingKey("order.created"), runtime.WithDelay(d)}, opts...)...)
func delayCall(pm *model.Published, fn func() *jen.Statement, lead []jen.Code, v string, delay jen.Code) []jen.Code {
	var first []jen.Code
	if pm.RoutingKey != "" {
		first = append(first, rt("WithRoutingKey").Call(jen.Lit(pm.RoutingKey)))
	}
	first = append(first, rt("WithDelay").Call(delay))
	opts := jen.Append(jen.Index().Add(rt("PublishOption")).Values(first...), jen.Id("opts").Op("...")).Op("...")
	args := append(append([]jen.Code{}, lead...), jen.Id(v), opts)
	return []jen.Code{fitted(1, "", func(list *jen.Statement) *jen.Statement { return jen.Return(fn().Add(list)) }, args...)}
}

// publishAfterMethod emits, for a message with delay: true,
//
//	func (p *OrdersPublisher) PublishOrderPlacedAfter(ctx context.Context, d time.Duration, m OrderPlaced, opts ...runtime.PublishOption) error
//
// and, with at, PublishOrderPlacedAt(ctx, t time.Time, m, opts...), over
// runtime.Publish with runtime.WithDelay.
func publishAfterMethod(f *jen.File, p *model.Publisher, pm *model.Published, at bool) {
	msg, name := pm.Message, delayName(pm, at, false)
	param, delay := delayArg(at)
	doc(f.Comment, "%s publishes m as %q %s, %s, and waits for the broker's confirm that its delay topology holds it (Topology() declares it).%s See runtime.WithDelay for the topology, the rounding and the errors.",
		name, msg.Type, route(p, pm), delayNote(at), optionsNote(pm))
	params := []jen.Code{jen.Id("ctx").Qual(contextPkg, "Context"), param, jen.Id("m").Id(msg.GoName), jen.Id("opts").Op("...").Add(rt("PublishOption"))}
	f.Add(method(p.GoName, name, params, jen.Error()).Block(
		delayCall(pm, runtimeCall("Publish"), []jen.Code{jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}, "m", delay)...,
	))
}

// publishAfterTxMethod emits the outbox's PublishOrderPlacedAfterTx(ctx,
// tx, d, m, opts...) (with at, PublishOrderPlacedAtTx(ctx, tx, t, m,
// opts...)) over pgstore.PublishTx with runtime.WithDelay: the row keeps
// the destination and the due time, and the relay publishes it into the
// delay topology for the time left.
func publishAfterTxMethod(f *jen.File, m *model.Model, p *model.Publisher, pm *model.Published, at bool) {
	msg, name := pm.Message, delayName(pm, at, true)
	param, delay := delayArg(at)
	doc(f.Comment, "%s writes m, as %q %s, to the outbox in tx, %s: encoded and validated now, published by the relay once tx commits into the delay topology for the time then left (at once when none is).%s See runtime.WithDelay and pgstore.PublishTx.",
		name, msg.Type, route(p, pm), delayNote(at), optionsNote(pm))
	params := []jen.Code{
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("tx").Qual(pgxPkg, "Tx"),
		param,
		jen.Id("m").Id(msg.GoName),
		jen.Id("opts").Op("...").Add(rt("PublishOption")),
	}
	lead := []jen.Code{jen.Id("ctx"), jen.Id("tx"), jen.Id("p").Dot("ob"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}
	publishTx := func() *jen.Statement { return jen.Qual(pgstorePkg, "PublishTx") }
	body := append(prefixCheck(m, name, "ob", ""), delayCall(pm, publishTx, lead, "m", delay)...)
	f.Add(method(p.OutboxName, name, params, jen.Error()).Block(body...))
}
