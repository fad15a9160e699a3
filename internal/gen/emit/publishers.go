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
//		return runtime.Publish(ctx, p.c, OrderPlacedType, "orders", m, append([]runtime.PublishOption{runtime.WithRoutingKey("order.created")}, opts...)...)
//	}
func publishMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes m as %q %s, and waits for the broker's confirm.%s%s See runtime.Publish for its errors and for what cancelling ctx does.",
		pm.Method, msg.Type, route(p, pm), optionsNote(pm), idNote)
	f.Func().Params(jen.Id("p").Op("*").Id(p.GoName)).Id(pm.Method).Params(
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("m").Id(msg.GoName),
		jen.Id("opts").Op("...").Add(rt("PublishOption")),
	).Error().Block(
		jen.Return(rt("Publish").Call(jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName),
			jen.Lit(p.ExchangeName()), jen.Id("m"), publishOptions(pm))),
	)
}

// publishBatchMethod emits PublishOrderPlacedBatch over runtime.PublishBatch.
func publishBatchMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes ms as %q %s, in one pipelined batch, and waits for every confirm.%s See runtime.PublishBatch for its errors and for what cancelling ctx does.",
		pm.BatchName, msg.Type, route(p, pm), optionsNote(pm))
	f.Func().Params(jen.Id("p").Op("*").Id(p.GoName)).Id(pm.BatchName).Params(
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("ms").Index().Id(msg.GoName),
		jen.Id("opts").Op("...").Add(rt("PublishOption")),
	).Error().Block(
		jen.Return(rt("PublishBatch").Call(jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName),
			jen.Lit(p.ExchangeName()), jen.Id("ms"), publishOptions(pm))),
	)
}

// publishAsyncMethod emits PublishOrderPlacedAsync over runtime.PublishAsync.
func publishAsyncMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s publishes m as %q %s, and returns once it is written, without waiting for the broker's confirm: the runtime.Pending's Wait gives the error %s would have returned.%s%s See runtime.PublishAsync for its errors and for what cancelling ctx does.",
		pm.AsyncName, msg.Type, route(p, pm), pm.Method, optionsNote(pm), idNote)
	f.Func().Params(jen.Id("p").Op("*").Id(p.GoName)).Id(pm.AsyncName).Params(
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("m").Id(msg.GoName),
		jen.Id("opts").Op("...").Add(rt("PublishOption")),
	).Params(jen.Op("*").Add(rt("Pending")), jen.Error()).Block(
		jen.Return(rt("PublishAsync").Call(jen.Id("ctx"), jen.Id("p").Dot("c"), jen.Id(msg.VarName),
			jen.Lit(p.ExchangeName()), jen.Id("m"), publishOptions(pm))),
	)
}

// publishOptions is opts..., or, with a default routing key,
// append([]runtime.PublishOption{runtime.WithRoutingKey("key")}, opts...)...
func publishOptions(pm *model.Published) jen.Code {
	if pm.RoutingKey == "" {
		return jen.Id("opts").Op("...")
	}
	return jen.Append(
		jen.Index().Add(rt("PublishOption")).Values(rt("WithRoutingKey").Call(jen.Lit(pm.RoutingKey))),
		jen.Id("opts").Op("..."),
	).Op("...")
}
