package schema_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/acemq/acemq-go/internal/gen/schema"
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
