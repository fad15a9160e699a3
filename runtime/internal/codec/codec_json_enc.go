package codec

import (
	"encoding/json"

	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
)

// marshal is json.Marshal(v), by the message type's generated encoder
// when it has one and takes v (the same bytes: TestJSONEncoderIsMarshal,
// and the generator's differential test on every JSON Schema of its
// corpus), else by encoding/json, whose errors are the codec's.
func (c *jsonCodec) marshal(v any) ([]byte, error) {
	if c.enc != nil {
		if body, ok := jsoncheck.Encode(c.enc, v); ok {
			return body, nil
		}
	}
	return json.Marshal(v)
}
