package emit

import (
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// requesterStruct emits, for a publisher of requests, the struct with its
// runtime.Requester, the constructor and Close:
//
//	type PricingPublisher struct {
//		c *runtime.Connection
//		r *runtime.Requester
//	}
//
//	func NewPricingPublisher(c *runtime.Connection, opts ...runtime.RequesterOption) *PricingPublisher
//	func (p *PricingPublisher) Close(ctx context.Context) error
func requesterStruct(f *jen.File, p *model.Publisher) {
	f.Type().Id(p.GoName).Struct(
		jen.Id("c").Op("*").Add(rt("Connection")),
		jen.Id("r").Op("*").Add(rt("Requester")),
	)
	f.Line()
	doc(f.Comment, "%s returns the publisher %q, publishing on c. Its requests wait for their replies through a runtime.Requester of its own (direct reply-to unless opts carry runtime.WithReplyQueue), opened on first use; Close it when done.", p.NewName, p.Name)
	f.Func().Id(p.NewName).Params(
		jen.Id("c").Op("*").Add(rt("Connection")),
		jen.Id("opts").Op("...").Add(rt("RequesterOption")),
	).Op("*").Id(p.GoName).Block(
		jen.Return(jen.Op("&").Id(p.GoName).Values(jen.Dict{
			jen.Id("c"): jen.Id("c"),
			jen.Id("r"): rt("NewRequester").Call(jen.Id("c"), jen.Id("opts").Op("...")),
		})),
	)
	f.Line()
	doc(f.Comment, "Close closes the publisher's runtime.Requester: a request still waiting fails with an error matching runtime.ErrNoReply. See runtime.Requester.Close.")
	f.Func().Params(jen.Id("p").Op("*").Id(p.GoName)).Id("Close").Params(
		jen.Id("ctx").Qual(contextPkg, "Context"),
	).Error().Block(
		jen.Return(jen.Id("p").Dot("r").Dot("Close").Call(jen.Id("ctx"))),
	)
}

// requestMethod emits
//
//	func (p *PricingPublisher) RequestQuoteRequested(ctx context.Context, m QuoteRequested, opts ...runtime.PublishOption) (Quote, error) {
//		var o acemqimpl.PublishOptions
//		return runtime.Request(ctx, p.r, quoteRequestedType, quoteType, "", m, o.With(runtime.WithRoutingKey("quotes"), opts)...)
//	}
func requestMethod(f *jen.File, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s sends m as %q %s and waits for its reply, %s (%q): ctx is the timeout. A responder's error comes back as a *runtime.ReplyError, never as a timeout; a reply after ctx ended is dropped.%s See runtime.Request for its errors.",
		pm.RequestName, msg.Type, route(p, pm), msg.Reply.GoName, msg.Reply.Type, optionsNote(pm))
	results := jen.Params(jen.Id(msg.Reply.GoName), jen.Error())
	lead := []jen.Code{jen.Id("ctx"), jen.Id("p").Dot("r"), jen.Id(msg.VarName), jen.Id(msg.Reply.VarName), jen.Lit(p.ExchangeName())}
	f.Add(method(p.GoName, pm.RequestName, publishParams(jen.Id("m").Id(msg.GoName)), results).Block(
		publishCall(pm, runtimeCall("Request"), lead, "m")...,
	))
}
