package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hamba/avro/v2"
)

// avroHeaderLen is the Confluent wire format's header: the magic byte 0x00
// and the schema id, 4 bytes big-endian.
const avroHeaderLen = 5

// avroAPI bounds what one hostile body can make the decoder allocate: a
// string or bytes value of at most 16 MiB, an array of at most 1<<20
// elements (hamba's defaults are 1 MiB and no limit).
var avroAPI = avro.Config{
	MaxByteSliceSize:  16 << 20,
	MaxSliceAllocSize: 1 << 20,
}.Freeze()

// avroReaders recycles decoders' readers, as hamba's Unmarshal does (a
// reader carries a 1 KiB slab for short strings; strings already handed
// out keep their part of it, which is never written again).
var avroReaders = sync.Pool{New: func() any { return avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPI)) }}

// avroWriters recycles encoders' buffers; Encode copies the result out.
var avroWriters = sync.Pool{New: func() any { return avro.NewWriter(nil, 512, avro.WithWriterConfig(avroAPI)) }}

// avroCodec is the Confluent-framed Avro codec.
type avroCodec struct {
	reg      SchemaRegistry
	subject  string
	text     string      // the reader schema as given, registered on first Encode
	reader   avro.Schema // the schema the code was generated from
	readerFP [32]byte
	compat   *avro.SchemaCompatibility

	mu sync.Mutex   // serialises registration
	id atomic.Int64 // the reader schema's id once registered, else 0

	writers sync.Map // writer schema id (int) → *avroWriter
}

// avroWriter is what the codec learned about one writer schema id.
type avroWriter struct {
	decodeWith avro.Schema // the reader schema, or the writer resolved onto it
	err        error       // the pair cannot resolve (a permanent answer)
}

// NewAvroCodec returns the Avro codec for schema (the reader schema the
// code was generated from), registered in reg under subject. The schema is
// parsed here: one that does not parse is an error, never a panic.
//
// The body is the Confluent wire format: the magic byte 0x00, the schema id
// as 4 bytes big-endian, then the Avro binary encoding; the content type is
// application/vnd.apache.avro+binary. Encode registers the schema on first
// use (ctx bounds that call; a failed registration is retried on the next
// Encode) and writes with it; a value that does not fit the schema is an
// error wrapping ErrInvalidMessage. Decode looks the writer schema up by
// the body's id (ctx bounds that call; parsed writer schemas are cached by
// id) and, when it differs from the reader schema, resolves it onto the
// reader schema with Avro's rules, so a field the writer lacks is filled
// with its default; a pair that cannot resolve is an error naming the field.
//
// Go values use `avro:"name"` struct tags; logical types map to time.Time
// (timestamp-millis, timestamp-micros, date), *big.Rat (decimal) and string
// (uuid). The codec only uses reg through the SchemaRegistry interface, so
// any registry (in memory, files, Confluent HTTP) fits. Safe for concurrent
// use.
func NewAvroCodec(reg SchemaRegistry, subject, schema string) (Codec, error) {
	if reg == nil {
		return nil, errors.New("Avro codec: no schema registry")
	}
	if subject == "" {
		return nil, errors.New("Avro codec: no registry subject")
	}
	reader, err := avroParse(schema)
	if err != nil {
		return nil, err
	}
	return &avroCodec{
		reg:      reg,
		subject:  subject,
		text:     schema,
		reader:   reader,
		readerFP: reader.Fingerprint(),
		compat:   avro.NewSchemaCompatibility(),
	}, nil
}

// ContentType is application/vnd.apache.avro+binary.
func (c *avroCodec) ContentType() string { return ContentTypeAvro }

// Encode writes the Confluent header and v in the reader schema.
func (c *avroCodec) Encode(ctx context.Context, v any) (body []byte, err error) {
	defer codecRecover(&err, "Avro codec: encoding a %T", v)
	id, err := c.schemaID(ctx)
	if err != nil {
		return nil, err
	}
	w := avroWriters.Get().(*avro.Writer)
	defer func() {
		w.Error = nil
		w.Reset(nil)
		avroWriters.Put(w)
	}()
	w.Reset(nil)
	var header [avroHeaderLen]byte // header[0] is the magic byte 0x00
	binary.BigEndian.PutUint32(header[1:], uint32(id))
	_, _ = w.Write(header[:]) // into the buffer: cannot fail
	w.WriteVal(c.reader, v)
	if w.Error != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMessage, w.Error)
	}
	return bytes.Clone(w.Buffer()), nil
}

// schemaID registers the reader schema once and returns its id.
func (c *avroCodec) schemaID(ctx context.Context) (int, error) {
	if id := c.id.Load(); id != 0 {
		return int(id), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id := c.id.Load(); id != 0 {
		return int(id), nil
	}
	id, err := c.reg.Register(ctx, c.subject, c.text)
	if err != nil {
		return 0, fmt.Errorf("register the Avro schema under subject %q: %w", c.subject, err)
	}
	if id < 1 || id > 1<<31-1 {
		return 0, fmt.Errorf("register the Avro schema under subject %q: id %d does not fit the wire format", c.subject, id)
	}
	c.id.Store(int64(id))
	return id, nil
}

// Decode reads the header, finds the writer schema and decodes into v.
func (c *avroCodec) Decode(ctx context.Context, body []byte, v any) (err error) {
	defer codecRecover(&err, "Avro codec: decoding into a %T", v)
	if rv := reflect.ValueOf(v); rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("Avro codec cannot decode into a %T: want a non-nil pointer", v)
	}
	if len(body) < avroHeaderLen {
		return fmt.Errorf("not in the Confluent wire format: the body is %d bytes, shorter than the 5-byte header (magic byte 0x00, 4-byte schema id)", len(body))
	}
	if body[0] != 0 {
		return fmt.Errorf("not in the Confluent wire format: the first byte is 0x%02x, not the magic byte 0x00", body[0])
	}
	id := int(binary.BigEndian.Uint32(body[1:avroHeaderLen]))
	w, err := c.writer(ctx, id)
	if err != nil {
		return err
	}
	if err := avroUnmarshal(w.decodeWith, body[avroHeaderLen:], v); err != nil {
		return fmt.Errorf("the Avro body (writer schema %d) does not decode: %w", id, err)
	}
	return nil
}

// avroUnmarshal decodes data into v and, unlike hamba's Unmarshal, treats
// running out of data as the error it is: hamba reports a read past the
// end as io.EOF and its Unmarshal returns nil for io.EOF, so a truncated
// body would decode into zero values.
func avroUnmarshal(schema avro.Schema, data []byte, v any) error {
	r := avroReaders.Get().(*avro.Reader).Reset(data)
	defer func() {
		r.Error = nil
		avroReaders.Put(r.Reset(nil))
	}()
	r.ReadVal(schema, v)
	switch {
	case r.Error == nil:
		return nil
	case errors.Is(r.Error, io.EOF) || errors.Is(r.Error, io.ErrUnexpectedEOF):
		return fmt.Errorf("the body ends too early (%d bytes of Avro data): %w", len(data), io.ErrUnexpectedEOF)
	}
	return r.Error
}

// writer returns how to decode bodies written with schema id, from the
// cache or the registry. Registry failures are not cached (they may pass);
// a writer schema that does not parse or resolve is.
func (c *avroCodec) writer(ctx context.Context, id int) (*avroWriter, error) {
	if w, ok := c.writers.Load(id); ok {
		return w.(*avroWriter), w.(*avroWriter).err
	}
	text, err := c.reg.Schema(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("look up the writer schema: %w", err)
	}
	w := c.resolve(id, text)
	actual, _ := c.writers.LoadOrStore(id, w)
	return actual.(*avroWriter), actual.(*avroWriter).err
}

// resolve works out how to read what writer schema id wrote.
func (c *avroCodec) resolve(id int, text string) *avroWriter {
	ws, err := avroParse(text)
	if err != nil {
		return &avroWriter{err: fmt.Errorf("writer schema %d: %w", id, err)}
	}
	if ws.Fingerprint() == c.readerFP {
		return &avroWriter{decodeWith: c.reader}
	}
	resolved, err := c.compat.Resolve(c.reader, ws)
	if err != nil {
		return &avroWriter{err: fmt.Errorf("writer schema %d cannot be read as the reader schema: %s",
			id, avroExplain(c.compat, c.reader, ws, err))}
	}
	return &avroWriter{decodeWith: resolved}
}

// avroExplain prefixes hamba's resolution error with the path of the field
// where reader and writer part ways ("field Order.amount: ..."), which
// hamba's text names only for a missing field.
func avroExplain(compat *avro.SchemaCompatibility, reader, writer avro.Schema, err error) string {
	if path := avroFieldPath(compat, reader, writer, ""); path != "" {
		return fmt.Sprintf("field %s: %v", path, err)
	}
	return err.Error()
}

// avroFieldPath walks reader and writer together and returns the dotted
// path of the first reader field that cannot be read from the writer, or
// "" when the mismatch is not inside a record field.
func avroFieldPath(compat *avro.SchemaCompatibility, reader, writer avro.Schema, path string) string {
	reader, writer = avroDeref(reader), avroDeref(writer)
	switch r := reader.(type) {
	case *avro.RecordSchema:
		w, ok := writer.(*avro.RecordSchema)
		if !ok {
			return path
		}
		if path == "" {
			path = r.Name()
		}
		for _, rf := range r.Fields() {
			fpath := path + "." + rf.Name()
			wf := avroWriterField(w, rf)
			if wf == nil {
				if !rf.HasDefault() {
					return fpath
				}
				continue
			}
			if compat.Compatible(rf.Type(), wf.Type()) != nil {
				return avroFieldPath(compat, rf.Type(), wf.Type(), fpath)
			}
		}
	case *avro.ArraySchema:
		if w, ok := writer.(*avro.ArraySchema); ok {
			return avroFieldPath(compat, r.Items(), w.Items(), path+"[]")
		}
	case *avro.MapSchema:
		if w, ok := writer.(*avro.MapSchema); ok {
			return avroFieldPath(compat, r.Values(), w.Values(), path+"{}")
		}
	}
	if w, ok := writer.(*avro.UnionSchema); ok {
		for _, branch := range w.Types() {
			if compat.Compatible(reader, branch) != nil {
				return avroFieldPath(compat, reader, branch, path)
			}
		}
	}
	return path
}

// avroWriterField finds the writer's field for reader field rf, by name or
// by one of rf's aliases, as Avro resolution does.
func avroWriterField(w *avro.RecordSchema, rf *avro.Field) *avro.Field {
	for _, wf := range w.Fields() {
		if wf.Name() == rf.Name() || slices.Contains(rf.Aliases(), wf.Name()) {
			return wf
		}
	}
	return nil
}

func avroDeref(s avro.Schema) avro.Schema {
	if ref, ok := s.(*avro.RefSchema); ok {
		return ref.Schema()
	}
	return s
}
