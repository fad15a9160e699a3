package emit

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"
)

// Every generated line is within MaxLine columns: an emitter whose
// construct can grow with the manifest's names builds it with fitted (a
// parameter or argument list on one line when it fits, else one item a
// line, gofmt's form of a long list), litFit (a string cut into pieces
// joined by +) or a composite literal of one field a line.

// fitted is build(list), list being items in parentheses: on one line
// when every line of the result, indented depth tabs and followed by tail,
// is within MaxLine; else on a line of their own between the parentheses
// when that fits; else one item a line:
//
//	func (p *OrdersPublisher) PublishOrderPlacedAsync(
//		ctx context.Context, m OrderPlaced, opts ...runtime.PublishOption,
//	) (*runtime.Pending, error) {
func fitted(depth int, tail string, build func(list *jen.Statement) *jen.Statement, items ...jen.Code) *jen.Statement {
	for _, o := range []jen.Options{
		{Open: "(", Close: ")", Separator: ","},
		{Open: "(\n", Close: ",\n)", Separator: ","},
	} {
		if s := build(jen.Custom(o, items...)); fits(depth, tail, s) {
			return s
		}
	}
	return build(jen.Custom(jen.Options{Open: "(", Close: ")", Separator: ",", Multi: true}, items...))
}

// fits says whether every line of code, rendered as gofmt writes it,
// indented depth tabs, its last line followed by tail, is within MaxLine.
func fits(depth int, tail string, code jen.Code) bool {
	for _, l := range strings.Split(fmt.Sprintf("%#v", code)+tail, "\n") {
		if depth+width(l) > MaxLine {
			return false
		}
	}
	return true
}

// litFit is s as a string literal, or, when the literal would not fit
// on its line (indented depth tabs, after lead, with room for what usually
// follows it), pieces of it joined by +, each continuation a tab further
// in, cut after a space where one is (see cut):
//
//	return errors.New("PublishPaymentReceivedTx: the outbox is not on the manifest's table " +
//		"billing_outbox: make it with pgstore.WithPrefix(TablePrefix)")
func litFit(depth int, lead, s string) *jen.Statement {
	const room = 3 // a closing ")," or " +"
	limit := MaxLine - depth - width(lead) - room
	var lit *jen.Statement
	for s != "" {
		head := s
		for width(strconv.Quote(head)) > limit {
			shorter := cut(head, width(head)-1-(width(strconv.Quote(head))-limit))
			if shorter == "" {
				_, n := utf8.DecodeRuneInString(head)
				head = head[:n] // a piece of one rune, however wide it quotes
				break
			}
			head = shorter
		}
		if lit == nil {
			lit = jen.Lit(head)
		} else {
			lit = lit.Op("+").Line().Lit(head)
		}
		s = s[len(head):]
		limit = MaxLine - depth - 1 - room
	}
	if lit == nil {
		return jen.Lit("")
	}
	return lit
}
