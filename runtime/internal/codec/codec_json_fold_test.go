package codec

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
)

// foldCafe has a member name that is not ASCII: encoding/json matches
// "Sucré" to it (its case folding), segmentio/encoding does not.
type foldCafe struct {
	Sucre *bool `json:"sucré"`
}

// A body whose key only encoding/json's case folding matches is left
// undecided by the decode scan; the checked codec then decodes it as the
// reference codec does: the same value ("Sucré" read into the field), and
// the same error for a value that does not fit (segmentio/encoding, which
// skipped the key, took both).
func TestJSONCodecCheckedDecodesFoldedKeysAsEncodingJSON(t *testing.T) {
	const schema = `{"type": "object", "properties": {"sucré": {"type": "boolean"}}}`
	check := func(v any, c *jsoncheck.Check) bool { _, ok := v.(*foldCafe); return ok }
	shape := &jsoncheck.Shape{Kind: jsoncheck.Object, Fields: []jsoncheck.Member{{Name: "sucré", Shape: &jsoncheck.Shape{}}}}
	checked, err := NewJSONCodecChecked(schema, check, shape)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := NewJSONCodec(schema)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, body := range []string{`{"Sucré":true}`, `{"SUCRÉ":false}`, `{"Sucré":"x"}`, `{"sucré":true}`} {
		var got, want foldCafe
		gotErr := checked.Decode(ctx, []byte(body), &got)
		wantErr := ref.Decode(ctx, []byte(body), &want)
		var ju foldCafe
		juErr := json.Unmarshal([]byte(body), &ju)
		switch {
		case (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error():
			t.Errorf("%s: the checked codec says %v, the reference %v", body, gotErr, wantErr)
		case gotErr == nil && (!reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, ju) || juErr != nil):
			t.Errorf("%s: the checked codec made %+v, the reference %+v, json.Unmarshal %+v (%v)", body, got, want, ju, juErr)
		}
	}
}
