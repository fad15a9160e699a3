package names_test

import (
	"fmt"
	"go/token"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/names"
)

func TestGoName(t *testing.T) {
	r := names.Default()
	for in, want := range map[string]string{
		"orders.new":   "OrdersNew",
		"type":         "Type",
		"func":         "Func",
		"9lives":       "X9lives",
		"first-name":   "FirstName",
		"first_name":   "FirstName",
		"名前":           "X名前",
		"ünïcode":      "Ünïcode",
		"":             "",
		"-":            "",
		"\xff":         "",
		"$schema":      "Schema",
		"a b\tc\nd":    "ABCD",
		"com.acme.V2":  "ComAcmeV2",
		"\xff\xfeok":   "Ok",
		"ok\xffid":     "OkID",
		"order_id":     "OrderID",
		"orderId":      "OrderID",
		"orderID":      "OrderID",
		"customer_id":  "CustomerID",
		"html_url":     "HTMLURL",
		"htmlUrl":      "HTMLURL",
		"HTMLParser":   "HTMLParser",
		"userIds":      "UserIDs",
		"urls":         "URLs",
		"ss":           "Ss",
		"api-v2":       "APIV2",
		"utf8_name":    "UTF8Name",
		"identity":     "Identity",
		"OrderPlaced":  "OrderPlaced",
		"sha256Sum":    "Sha256Sum",
		"amqp_headers": "AMQPHeaders",
	} {
		got := r.GoName(in)
		if got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
		if got != "" && (!token.IsIdentifier(got) || !token.IsExported(got)) {
			t.Errorf("GoName(%q) = %q is not an exported identifier", in, got)
		}
	}
	if got := r.Ident("-"); got != "X" {
		t.Errorf(`Ident("-") = %q, want X`, got)
	}
}

func TestRules(t *testing.T) {
	off := names.New(false, nil)
	own := names.New(false, []string{"sku"})
	both := names.New(true, []string{"SKU"})
	for _, c := range []struct {
		r        *names.Rules
		in, want string
	}{
		{off, "order_id", "OrderId"},
		{off, "html_url", "HtmlUrl"},
		{off, "sku_id", "SkuId"},
		{own, "sku_id", "SKUId"},
		{both, "sku_id", "SKUID"},
		{nil, "order_id", "OrderId"},
	} {
		if got := c.r.GoName(c.in); got != c.want {
			t.Errorf("GoName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEnumSymbol(t *testing.T) {
	r := names.Default()
	for in, want := range map[string]string{
		"SPADES": "Spades", "IN_PROGRESS": "InProgress", "in-progress": "InProgress",
		"camelCase": "CamelCase", "HTTP2": "HTTP2", "9": "X9", "": "X", "*/": "X", "名前": "X名前",
		"EUR": "EUR", "usd": "Usd", "SMS_2": "Sms2", "sms": "Sms", "JSON": "JSON", "user_id": "UserID",
	} {
		if got := r.EnumSymbol(in); got != want {
			t.Errorf("EnumSymbol(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{
		"OrderPlaced": "orderPlaced", "HTTPOrder": "httpOrder", "ID": "id", "IDCard": "idCard",
		"X订单": "x订单", "X2faCode": "x2faCode", "Ünïcode": "ünïcode", "A": "a",
	} {
		if got := names.LowerFirst(in); got != want {
			t.Errorf("LowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScope(t *testing.T) {
	s := names.NewScope("Topology")
	got := []string{s.Take("Topology"), s.Take("A", "B"), s.Take("A", "B"), s.Take("A", "B")}
	want := []string{"Topology2", "A", "B", "A2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Take = %v, want %v", got, want)
	}
}

func ExampleRules_GoName() {
	r := names.Default()
	fmt.Println(r.GoName("order_id"), r.GoName("html_url"), r.GoName("orders.new"))
	fmt.Println(names.New(false, []string{"SKU"}).GoName("sku_id"))
	// Output:
	// OrderID HTMLURL OrdersNew
	// SKUId
}
