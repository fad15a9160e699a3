package emit

import (
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

const (
	pgstorePkg = "github.com/acemq/acemq-go/pgstore"
	pgxPkg     = "github.com/jackc/pgx/v5"
)

// outboxFile emits, per publisher with outbox: true, a writer of its
// messages to pgstore's transactional outbox: a struct over a
// *pgstore.Outbox, its constructor, and a Publish<Message>Tx method per
// message. Files emits it only when a publisher asks, so that a package
// without an outbox imports neither pgstore nor pgx.
func outboxFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	f.ImportName(pgstorePkg, "pgstore")
	f.ImportName(pgxPkg, "pgx")
	for _, p := range m.Publishers {
		if !p.Outbox {
			continue
		}
		doc(f.Comment, "%s writes the messages of the publisher %q to a transactional outbox (pgstore) in the caller's transaction, as %s would publish them; a pgstore.Relay publishes them once the transaction commits.",
			p.OutboxName, p.Name, p.GoName)
		f.Type().Id(p.OutboxName).Struct(jen.Id("ob").Op("*").Qual(pgstorePkg, "Outbox"))
		f.Line()
		doc(f.Comment, "%s returns the outbox writer of the publisher %q on ob (pgstore.NewOutbox: the connection whose codecs encode, the table).", p.NewOutboxName, p.Name)
		f.Func().Id(p.NewOutboxName).Params(jen.Id("ob").Op("*").Qual(pgstorePkg, "Outbox")).Op("*").Id(p.OutboxName).Block(
			jen.Return(jen.Op("&").Id(p.OutboxName).Values(jen.Dict{jen.Id("ob"): jen.Id("ob")})),
		)
		for _, pm := range p.Messages {
			if pm.TxName == "" {
				continue // a request: it waits for its reply, no outbox can
			}
			f.Line()
			publishTxMethod(f, m, p, pm)
			if pm.AfterTxName != "" {
				f.Line()
				publishAfterTxMethod(f, m, p, pm, false)
				f.Line()
				publishAfterTxMethod(f, m, p, pm, true)
			}
		}
		f.Line()
	}
	return f
}

// publishTxMethod emits
//
//	func (p *OrdersOutbox) PublishOrderPlacedTx(ctx context.Context, tx pgx.Tx, m OrderPlaced, opts ...runtime.PublishOption) error {
//		var o acemqimpl.PublishOptions
//		return pgstore.PublishTx(ctx, tx, p.ob, orderPlacedType, "orders", m, o.With(runtime.WithRoutingKey("order.created"), opts)...)
//	}
//
// (see publishCall).
func publishTxMethod(f *jen.File, m *model.Model, p *model.Publisher, pm *model.Published) {
	msg := pm.Message
	doc(f.Comment, "%s writes m, as %q %s, to the outbox in tx: encoded and validated now (an invalid m is an error matching runtime.ErrInvalidMessage, and nothing is written), published by the relay once tx commits.%s%s See pgstore.PublishTx for the ordering key and its lock.",
		pm.TxName, msg.Type, route(p, pm), optionsNote(pm), idNote)
	params := []jen.Code{
		jen.Id("ctx").Qual(contextPkg, "Context"),
		jen.Id("tx").Qual(pgxPkg, "Tx"),
		jen.Id("m").Id(msg.GoName),
		jen.Id("opts").Op("...").Add(rt("PublishOption")),
	}
	lead := []jen.Code{jen.Id("ctx"), jen.Id("tx"), jen.Id("p").Dot("ob"), jen.Id(msg.VarName), jen.Lit(p.ExchangeName())}
	publishTx := func() *jen.Statement { return jen.Qual(pgstorePkg, "PublishTx") }
	body := append(prefixCheck(m, pm.TxName, "ob", ""), publishCall(pm, publishTx, lead, "m")...)
	f.Add(method(p.OutboxName, pm.TxName, params, jen.Error()).Block(body...))
}
