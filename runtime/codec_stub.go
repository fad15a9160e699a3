package runtime

// Placeholders until the codecs land (codec_text.go, codec_json.go,
// codec_avro.go, registry_memory.go replace this file).

import (
	"context"
	"errors"
)

var errNotYet = errors.New("not implemented yet")

type stubCodec struct{ ct string }

func (s stubCodec) ContentType() string                                      { return s.ct }
func (s stubCodec) Encode(context.Context, any) ([]byte, error)              { return nil, errNotYet }
func (s stubCodec) Decode(context.Context, []byte, any) error                { return errNotYet }
func NewTextCodec() Codec                                                    { return stubCodec{ContentTypeText} }
func NewJSONCodec(schema string) (Codec, error)                              { return stubCodec{ContentTypeJSON}, nil }
func NewAvroCodec(reg SchemaRegistry, subject, schema string) (Codec, error) { return nil, errNotYet }

type MemoryRegistry struct{}

func NewMemoryRegistry() *MemoryRegistry                                      { return &MemoryRegistry{} }
func (*MemoryRegistry) Register(context.Context, string, string) (int, error) { return 0, errNotYet }
func (*MemoryRegistry) Schema(context.Context, int) (string, error)           { return "", errNotYet }
