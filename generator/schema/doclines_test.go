package schema_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/generator/schema"
)

func TestDocLines(t *testing.T) {
	got := schema.DocLines("\n first\r\nends */ here\rgo:generate rm -rf /\n  //go:build x\n/* open\nline 1\nbell\a\u2028tab\there\n\n")
	want := []string{" first", "ends * / here", " go:generate rm -rf /", "   //go:build x", " / * open", " line 1", "belltab here"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DocLines = %q\nwant      %q", got, want)
	}
	for _, l := range got {
		if strings.ContainsAny(l, "\n\r") || strings.HasPrefix(l, "go:") || strings.HasPrefix(l, "/") || strings.Contains(l, "*/") {
			t.Errorf("unsafe doc line %q", l)
		}
	}
}

// A schema whose names and docs are hostile still gives code that parses,
// with no directive and no comment escape (TestRoundTrip also compiles,
// vets and runs it).
func TestHostileNamesAndDocs(t *testing.T) {
	src, err := gen(t, schema.JSONSchema, "Msg", `{"description":"a */ b\ngo:generate echo pwned\n//go:build ignore","type":"object",
		"required":["type","func","9lives","first-name","名前"],
		"properties":{"type":{"type":"string"},"func":{"type":"string"},"9lives":{"type":"string"},"first-name":{"type":"string"},"名前":{"type":"string"},"first_name":{"type":"string","description":"*/ func init() {}"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	f := checkSource(t, src)
	if len(f.Decls) != 1 {
		t.Errorf("want one declaration, got %d:\n%s", len(f.Decls), src)
	}
	assertHas(t, src,
		"// a * / b", "go:generate echo pwned",
		"Type string `json:\"type\"`", "Func string `json:\"func\"`", "X9lives string `json:\"9lives\"`",
		"FirstName string `json:\"first-name\"`", "X名前 string `json:\"名前\"`", "FirstName2 *string `json:\"first_name,omitempty\"`")
	src, err = gen(t, schema.Avro, "Msg", `{"type":"record","name":"type","doc":"*/\ngo:generate x","fields":[{"name":"func","type":"int","doc":"//go:noinline"},{"name":"Func","type":"int"},{"name":"_9","type":"int"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	checkSource(t, src)
	assertHas(t, src, "type Msg struct", "Func int32 `avro:\"func\" json:\"func\"`", "Func2 int32 `avro:\"Func\" json:\"Func\"`", "X9 int32")
}
