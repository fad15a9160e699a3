package codec

import (
	"github.com/acemq/acemq-go/runtime/internal/jsoncheck"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
)

// Codecs are the constructors a MessageType makes its Codecs with.
type Codecs struct{}

func (Codecs) Text() msgtype.Codec { return NewTextCodec() }

func (Codecs) JSON(schema string, check jsoncheck.Checker, shape *jsoncheck.Shape, enc jsoncheck.Encoder, dec jsoncheck.DecodeFunc) (msgtype.Codec, error) {
	c, err := NewJSONCodecChecked(schema, check, shape)
	if jc, ok := c.(*jsonCodec); ok {
		jc.enc, jc.dec = enc, dec
	}
	return c, err
}

func (Codecs) JSONReference(schema string) (msgtype.Codec, error) { return NewJSONCodec(schema) }

func (Codecs) Avro(reg msgtype.SchemaRegistry, subject, schema string) (msgtype.Codec, error) {
	return NewAvroCodec(reg, subject, schema)
}
