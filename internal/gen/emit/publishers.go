package emit

import (
	"fmt"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// publishersFile emits one struct per publisher with a constructor and a
// Publish<Message>, Publish<Message>Batch and Publish<Message>Async method
// per message.
func publishersFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	for _, p := range m.Publishers {
		// type OrdersPublisher struct{ c *runtime.Connection }
		if p.Exchange == nil {
			doc(f.Comment, "%s publishes through the default exchange, straight to queues.", p.GoName)
		} else {
			doc(f.Comment, "%s publishes to the exchange %q.", p.GoName, p.Exchange.Name)
		}
		if p.Requests {
			requesterStruct(f, p)
		} else {
			f.Type().Id(p.GoName).Struct(jen.Id("c").Op("*").Add(rt("Connection")))
			f.Line()
			// func NewOrdersPublisher(c *runtime.Connection) *OrdersPublisher
			doc(f.Comment, "%s returns the publisher %q, publishing on c.", p.NewName, p.Name)
			f.Func().Id(p.NewName).Params(jen.Id("c").Op("*").Add(rt("Connection"))).Op("*").Id(p.GoName).Block(
				jen.Return(jen.Op("&").Id(p.GoName).Values(jen.Dict{jen.Id("c"): jen.Id("c")})),
			)
		}
		for _, pm := range p.Messages {
			f.Line()
			if pm.RequestName != "" {
				requestMethod(f, p, pm)
				continue
			}
			publishMethod(f, p, pm)
			f.Line()
			publishBatchMethod(f, p, pm)
			f.Line()
			publishAsyncMethod(f, p, pm)
			if pm.AfterName != "" {
				f.Line()
				publishAfterMethod(f, p, pm, false)
				f.Line()
				publishAfterMethod(f, p, pm, true)
			}
		}
		f.Line()
	}
	return f
}

// route says where a publish goes.
func route(p *model.Publisher, pm *model.Published) string {
	switch {
	case p.Exchange == nil:
		return fmt.Sprintf("to the queue %q through the default exchange", pm.RoutingKey)
	case pm.RoutingKey == "":
		return fmt.Sprintf("to the exchange %q with an empty routing key", p.Exchange.Name)
	}
	return fmt.Sprintf("to the exchange %q with the routing key %q", p.Exchange.Name, pm.RoutingKey)
}

// optionsNote is what a publish method says of its options.
func optionsNote(pm *model.Published) string {
	if pm.RoutingKey == "" {
		return ""
	}
	return " The options in opts apply after that routing key, so a runtime.WithRoutingKey among them wins."
}

// idNote is what a publish method of one message says of its identity.
const idNote = " A runtime.WithMessageID among opts gives m the producer's own identity (x-acemq-id) instead of a fresh one: give a re-publish the id of the publish it repeats, and a consumer's inbox handles it once."

// publishMethod emits
//
//	func (p *OrdersPublisher) PublishOrderPlaced(ctx context.Context, m OrderPlaced, opts ...runtime.PublishOption) error {
//		var o acemqimpl.PublishOptions
//		return runtime.Publish(ctx, p.c, orderPlacedType, "orders", m, o.With(runtime.WithRoutingKey("order.created"), opts)...)
//	}
//
// (runtime.Publish(ctx, p.c, orderPlacedType, "orders", m, opts...) when
// the manifest gives no routing key: see publishCall; a list wrapped when
// its line would pass MaxLine: see fitted).
func publishMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes m as %q %s, and waits for the broker's confirm.%s%s See runtime.Publish for its errors and for what cancelling ctx does.",
		pm.Method, msg.Type, route(p, pm), optionsNote(pm), idNote)
	f.Add(method(p.GoName, pm.Method, publishParams(jen.Id("m").Id(msg.GoName)), jen.Error()).Block(
		publishCall(pm, runtimeCall("Publish"), []jen.Code{jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}, "m")...,
	))
}

// publishBatchMethod emits PublishOrderPlacedBatch over runtime.PublishBatch.
func publishBatchMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes ms as %q %s, in one pipelined batch, and waits for every confirm.%s See runtime.PublishBatch for its errors and for what cancelling ctx does.",
		pm.BatchName, msg.Type, route(p, pm), optionsNote(pm))
	f.Add(method(p.GoName, pm.BatchName, publishParams(jen.Id("ms").Index().Id(msg.GoName)), jen.Error()).Block(
		publishCall(pm, runtimeCall("PublishBatch"), []jen.Code{jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}, "ms")...,
	))
}

// publishAsyncMethod emits PublishOrderPlacedAsync over runtime.PublishAsync.
func publishAsyncMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes m as %q %s, and returns once it is written, without waiting for the broker's confirm: the runtime.Pending's Wait gives the error %s would have returned.%s%s See runtime.PublishAsync for its errors and for what cancelling ctx does.",
		pm.AsyncName, msg.Type, route(p, pm), pm.Method, optionsNote(pm), idNote)
	results := jen.Params(jen.Op("*").Add(rt("Pending")), jen.Error())
	f.Add(method(p.GoName, pm.AsyncName, publishParams(jen.Id("m").Id(msg.GoName)), results).Block(
		publishCall(pm, runtimeCall("PublishAsync"), []jen.Code{jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}, "m")...,
	))
}

// publishParams are a publish method's parameters: ctx, the message (or
// messages) and opts.
func publishParams(m jen.Code) []jen.Code {
	return []jen.Code{jen.Id("ctx").Qual(contextPkg, "Context"), m, jen.Id("opts").Op("...").Add(rt("PublishOption"))}
}

// method is the signature of the method name of *recv, with params on its
// line when it fits MaxLine, else one a line (fitted).
func method(recv, name string, params []jen.Code, results jen.Code) *jen.Statement {
	return fitted(0, " {", func(list *jen.Statement) *jen.Statement {
		return jen.Func().Params(jen.Id("p").Op("*").Id(recv)).Id(name).Add(list).Add(results)
	}, params...)
}

// publishCall is a publish method's body: the call (a function of the
// runtime, or fn's) with lead, then v and opts... when the manifest gives
// the message no routing key; else v and the routing key before opts, held
// on the stack by an acemqimpl.PublishOptions (the options of
// append([]runtime.PublishOption{runtime.WithRoutingKey(key)}, opts...),
// in the same order, without allocating a slice a call):
//
//	var o acemqimpl.PublishOptions
//	return runtime.Publish(ctx, p.c, orderPlacedType, "orders", m, o.With(runtime.WithRoutingKey("order.created"), opts)...)
func publishCall(pm *model.Published, fn func() *jen.Statement, lead []jen.Code, v string) []jen.Code {
	args := append(append([]jen.Code{}, lead...), jen.Id(v))
	var body []jen.Code
	if pm.RoutingKey == "" {
		args = append(args, jen.Id("opts").Op("..."))
	} else {
		body = append(body, jen.Var().Id("o").Add(impl("PublishOptions")))
		args = append(args, jen.Id("o").Dot("With").Call(rt("WithRoutingKey").Call(jen.Lit(pm.RoutingKey)), jen.Id("opts")).Op("..."))
	}
	return append(body, fitted(1, "", func(list *jen.Statement) *jen.Statement { return jen.Return(fn().Add(list)) }, args...))
}

// runtimeCall is the runtime's function name, for publishCall.
func runtimeCall(name string) func() *jen.Statement {
	return func() *jen.Statement { return rt(name) }
}
