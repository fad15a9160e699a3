package emit

import (
	"fmt"
	"strings"

	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/dave/jennifer/jen"
)

// consumersFile emits, for each queue that consumes messages, a handler
// interface with one method per message type and a Consume function.
func consumersFile(m *model.Model, source string) *jen.File {
	f := newFile(m, source)
	for _, q := range m.Queues {
		if len(q.Consumes) == 0 {
			continue
		}
		handlerInterface(f, q)
		f.Line()
		if q.HandlerFuncName != "" {
			handlerFunc(f, q)
			f.Line()
		}
		consumeFunc(f, m, q)
		f.Line()
	}
	return f
}

// handlerFunc emits the func adapter of a handler of one message type, as
// http.HandlerFunc is of http.Handler:
//
//	type OrdersNewHandlerFunc func(ctx context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack
//
//	func (fn OrdersNewHandlerFunc) HandleOrderPlaced(ctx context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack {
//		return fn(ctx, m)
//	}
func handlerFunc(f *jen.File, q *model.Queue) {
	msg := q.Consumes[0]
	consumeArgs, callArgs := "ctx, c", "ctx, m"
	if q.Inbox != nil {
		consumeArgs, callArgs = "ctx, c, inbox", "ctx, tx, m"
	}
	doc(f.Comment, "%s adapts a func to %s, as http.HandlerFunc adapts one to http.Handler: %s(%s, %s(handle)).", q.HandlerFuncName, q.HandlerName, q.ConsumeName, consumeArgs, q.HandlerFuncName)
	f.Add(fitted(0, "", func(list *jen.Statement) *jen.Statement {
		return jen.Type().Id(q.HandlerFuncName).Func().Add(list).Add(handlerResults(msg))
	}, handlerParams(q, msg)...))
	f.Line()
	doc(f.Comment, "%s calls fn(%s).", msg.HandlerMethod, callArgs)
	args := []jen.Code{jen.Id("ctx"), jen.Id("m")}
	if q.Inbox != nil {
		args = []jen.Code{jen.Id("ctx"), jen.Id("tx"), jen.Id("m")}
	}
	sig := fitted(0, " {", func(list *jen.Statement) *jen.Statement {
		return jen.Func().Params(jen.Id("fn").Id(q.HandlerFuncName)).Id(msg.HandlerMethod).Add(list).Add(handlerResults(msg))
	}, handlerParams(q, msg)...)
	f.Add(sig.Block(jen.Return(jen.Id("fn").Call(args...))))
}

// handlerParams are a handler's parameters: (ctx, m), or (ctx, tx, m) on
// a queue with an inbox, tx being the inbox's pgx.Tx.
func handlerParams(q *model.Queue, msg *model.Message) []jen.Code {
	m := jen.Id("m").Op("*").Add(rt("Message")).Types(jen.Id(msg.GoName))
	if q.Inbox != nil {
		return []jen.Code{jen.Id("ctx").Qual(contextPkg, "Context"), jen.Id("tx").Qual(pgxPkg, "Tx"), m}
	}
	return []jen.Code{jen.Id("ctx").Qual(contextPkg, "Context"), m}
}

// handlerInterface emits
//
//	type OrdersNewHandler interface {
//		HandleOrderPlaced(ctx context.Context, m *runtime.Message[OrderPlaced]) runtime.Ack
//	}
func handlerInterface(f *jen.File, q *model.Queue) {
	text := fmt.Sprintf("%s handles the messages of the queue %q, one method per message type. Each returns what becomes of the message: runtime.Accept(), Retry(err), Reject(err) or Park(err); a method that panics is a Retry.",
		q.HandlerName, q.Name)
	if q.Inbox != nil {
		text += " The queue has an inbox: each method runs in the transaction tx of pgstore's inbox, which Accept commits (then the message is acked) and anything else rolls back; do the handler's work in tx and do not end it. A message whose id was already handled is acked without calling the method."
	}
	doc(f.Comment, "%s", text)
	f.Type().Id(q.HandlerName).InterfaceFunc(func(g *jen.Group) {
		for i, msg := range q.Consumes {
			if i > 0 {
				g.Line()
			}
			if msg.Reply != nil {
				doc(g.Comment, "%s answers a request of the type %q with its reply, %s, or an error its caller receives as a *runtime.ReplyError (a *runtime.ReplyError returned here keeps its Code); runtime.RetryRequest(err) retries the request instead, unless its caller has gone. A method that panics answers with a ReplyError of Code \"panic\".", msg.HandlerMethod, msg.Type, msg.Reply.GoName)
			} else {
				doc(g.Comment, "%s handles a message of the type %q.", msg.HandlerMethod, msg.Type)
			}
			g.Add(fitted(1, "", func(list *jen.Statement) *jen.Statement {
				return jen.Id(msg.HandlerMethod).Add(list).Add(handlerResults(msg))
			}, handlerParams(q, msg)...))
		}
	})
}

// consumeFunc emits
//
//	func ConsumeOrdersNew(ctx context.Context, c *runtime.Connection, h OrdersNewHandler, opts ...runtime.ConsumeOption) (*runtime.Consumer, error) {
//		return runtime.Consume(ctx, c, runtime.ConsumerSpec{...}, opts...)
//	}
func consumeFunc(f *jen.File, m *model.Model, q *model.Queue) {
	text := fmt.Sprintf("%s consumes the queue %q, handing each message to the method of h for its type property; a message of a type h has no method for is parked.",
		q.ConsumeName, q.Name)
	if q.Retry != nil {
		text += fmt.Sprintf(" Failures are retried by %s unless opts carry runtime.WithRetry.", q.Retry.GoName)
	} else {
		text += " The manifest gives the queue no retry policy: failures follow the runtime.WithRetry of opts, else the connection's, else runtime.NoRetry()."
	}
	if q.NativeRetry {
		text += " The manifest sets retry_in_broker: native: a failed delivery is requeued and the quorum queue itself holds it for the policy's wait (RabbitMQ 4.3's delayed retry; no rung queues), each requeue an attempt the broker counts."
	} else if q.RequeueOnFailure {
		text += " The manifest sets requeue_on_failure: a failed delivery goes back to the head of the queue instead of climbing the retry ladder (each time an attempt of its policy), a hot loop against a downstream that is down."
		if q.Type == "quorum" {
			text += " The queue is quorum (runtime.ConsumerSpec.Quorum): the broker's count of the requeues is shared by every consumer, whoever declared it."
		}
	}
	doc(f.Comment, "%s", text)
	f.Comment("")
	doc(f.Comment, "The consumer declares the queue's .dlq and .parked queues before it subscribes (runtime.WithoutDeclare stops that). ctx bounds the start only; stop the consumer with its Close method.")
	if q.Inbox != nil {
		f.Comment("")
		doc(f.Comment, "Every delivery goes through inbox (its Middleware, outside the middlewares of opts), which remembers each message id for %s; a message without an id is parked.", inboxRetention(q))
	}
	params := []jen.Code{jen.Id("ctx").Qual(contextPkg, "Context"), jen.Id("c").Op("*").Add(rt("Connection"))}
	body := []jen.Code{consumeNilCheck(q, "h", "the handler")}
	if q.Inbox != nil {
		params = append(params, jen.Id("inbox").Op("*").Qual(pgstorePkg, "Inbox"))
		body = append(body, consumeNilCheck(q, "inbox", "the inbox"))
		body = append(body, prefixCheck(m, q.ConsumeName, "inbox", "nil")...)
		body = append(body, fitted(1, "", func(list *jen.Statement) *jen.Statement {
			return jen.Id("opts").Op("=").Id("append").Add(list)
		}, jen.Index().Add(rt("ConsumeOption")).Values(
			rt("WithMiddleware").Call(jen.Id("inbox").Dot("Middleware").Call(inboxOptions(q)...))), jen.Id("opts").Op("...")))
	}
	params = append(params, jen.Id("h").Id(q.HandlerName), jen.Id("opts").Op("...").Add(rt("ConsumeOption")))
	body = append(body, jen.Return(rt("Consume").Call(jen.Id("ctx"), jen.Id("c"), consumerSpec(q), jen.Id("opts").Op("..."))))
	sig := fitted(0, " {", func(list *jen.Statement) *jen.Statement {
		return jen.Func().Id(q.ConsumeName).Add(list).Params(jen.Op("*").Add(rt("Consumer")), jen.Error())
	}, params...)
	f.Add(sig.Block(body...))
}

func consumeNilCheck(q *model.Queue, name, what string) jen.Code {
	return jen.If(jen.Id(name).Op("==").Nil()).Block(
		jen.Return(jen.Nil(), jen.Qual(errorsPkg, "New").Call(litFit(2, "return nil, errors.New(", q.ConsumeName+": "+what+" is nil"))),
	)
}

// inboxOptions are the arguments of inbox.Middleware: the manifest's
// retention, when it gives one.
func inboxOptions(q *model.Queue) []jen.Code {
	if q.Inbox.Retention == 0 {
		return nil
	}
	return []jen.Code{jen.Qual(pgstorePkg, "WithRetention").Call(duration(q.Inbox.Retention))}
}

func inboxRetention(q *model.Queue) string {
	if q.Inbox.Retention == 0 {
		return "the inbox's retention (pgstore.DefaultRetention, 7 days, unless pgstore.WithRetention)"
	}
	s := q.Inbox.Retention.String()
	s = strings.TrimSuffix(s, "0s")
	return strings.TrimSuffix(s, "0m")
}

// consumerSpec emits the runtime.ConsumerSpec literal.
func consumerSpec(q *model.Queue) jen.Code {
	return rt("ConsumerSpec").ValuesFunc(func(g *jen.Group) {
		field := func(name string, v jen.Code) { g.Line().Id(name).Op(":").Add(v) }
		field("Queue", jen.Lit(q.Name))
		if q.Type == "quorum" {
			// Whoever declares it: the broker's count is every consumer's.
			field("Quorum", jen.True())
		}
		if q.Retry != nil {
			field("Retry", jen.Op("&").Id(q.Retry.VarName))
		}
		if q.RequeueOnFailure {
			field("RequeueOnFailure", jen.True())
		}
		field("Routes", jen.Index().Add(rt("Route")).ValuesFunc(func(r *jen.Group) {
			for _, msg := range q.Consumes {
				if msg.Reply != nil {
					r.Line().Add(rt("HandleRequest").Call(jen.Id(msg.VarName), jen.Id(msg.Reply.VarName), jen.Id("h").Dot(msg.HandlerMethod)))
					continue
				}
				var h jen.Code = jen.Id("h").Dot(msg.HandlerMethod)
				if q.Inbox != nil {
					h = jen.Qual(pgstorePkg, "HandleTx").Types(jen.Id(msg.GoName)).Call(h)
				}
				r.Line().Add(rt("Handle").Call(jen.Id(msg.VarName), h))
			}
			r.Line()
		}))
		g.Line()
	})
}

// handlerResults is what a handler method returns: runtime.Ack, or for a
// request (Reply, error).
func handlerResults(msg *model.Message) jen.Code {
	if msg.Reply != nil {
		return jen.Params(jen.Id(msg.Reply.GoName), jen.Error())
	}
	return rt("Ack")
}
