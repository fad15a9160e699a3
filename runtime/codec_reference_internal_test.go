package runtime

import (
	"testing"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
)

// refOrder is TestWithReferenceValidation's payload: the checked codecs'
// own tests are internal/codec's.
type refOrder struct {
	ID string `json:"id"`
}

const refOrderSchema = `{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}`

// refChecked is a generated check of refOrder that counts its calls.
func refChecked(calls *int) jsoncheck.Checker {
	return func(v any, c *jsoncheck.Check) bool {
		switch v.(type) {
		case refOrder, *refOrder:
			*calls++
			return true
		}
		return false
	}
}

// WithReferenceValidation gives the type's codec without its check.
func TestWithReferenceValidation(t *testing.T) {
	var calls int
	mt := newCheckedJSONType[refOrder]("test.checked.v2", refOrderSchema, refChecked(&calls), nil)
	var cfg dialConfig
	WithReferenceValidation().applyDial(&cfg)
	ref, err := core.CodecFor(mt, connLink{&Connection{codecs: codecChoice(cfg, sharedRegistry)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Encode(t.Context(), refOrder{ID: "o-1"}); err != nil || calls != 0 {
		t.Errorf("reference codec: %v, check called %d times", err, calls)
	}
	fast, err := core.CodecFor(mt, connLink{&Connection{codecs: codecChoice(dialConfig{}, sharedRegistry)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fast.Encode(t.Context(), refOrder{ID: "o-1"}); err != nil || calls != 1 {
		t.Errorf("checked codec: %v, check called %d times", err, calls)
	}
}
