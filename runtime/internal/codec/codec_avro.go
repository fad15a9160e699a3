package codec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/acemq/acemq-go/runtime/internal/core"
	"github.com/acemq/acemq-go/runtime/internal/msgtype"
	"github.com/acemq/acemq-go/runtime/wire"

	"github.com/hamba/avro/v2"
)

// avroHeaderLen is the Confluent wire format's header: the magic byte 0x00
// and the schema id, 4 bytes big-endian.
const avroHeaderLen = 5

// avroEncodeConfig is the encoders' configuration (limits only bind
// readers), frozen in avroAPI.
//
// Arrays and maps are written as the Java reference and avsc write them: a
// count before each block and no byte size (hamba's default adds the size,
// a form the specification allows but some readers do not take: BigQuery,
// Elixir's avro_ex — hamba/avro#264). Readers take both forms.
var avroEncodeConfig = avro.Config{DisableBlockSizeHeader: true}

var avroAPI = avroEncodeConfig.Freeze()

// avroDecodeConfig is the decoders' configuration for one body limit (see
// avroDecoding).
func avroDecodeConfig(limit int) avro.Config {
	return avro.Config{MaxByteSliceSize: limit, MaxSliceAllocSize: limit}
}

// avroDecoding is the decoder configuration for one body limit: a string
// or bytes value, and an array or map, of at most limit bytes or elements
// (hamba's defaults are 1 MiB and no limit on elements), so a forged length
// in a body the consumer accepted cannot make the decoder allocate more than
// the body could hold. Its readers are recycled, as hamba's Unmarshal does
// (a reader carries a 1 KiB slab for short strings; strings already handed
// out keep their part of it, which is never written again).
type avroDecoding struct {
	limit   int
	api     avro.API
	readers sync.Pool
}

// avroDecodings holds one avroDecoding per body limit in use.
var avroDecodings sync.Map // int → *avroDecoding

func avroDecodingFor(limit int) *avroDecoding {
	if d, ok := avroDecodings.Load(limit); ok {
		return d.(*avroDecoding)
	}
	d := &avroDecoding{limit: limit, api: avroDecodeConfig(limit).Freeze()}
	d.readers.New = func() any { return avro.NewReader(nil, 0, avro.WithReaderConfig(d.api)) }
	actual, _ := avroDecodings.LoadOrStore(limit, d)
	return actual.(*avroDecoding)
}

// avroWriters recycles encoders' buffers; Encode copies the result out.
var avroWriters = sync.Pool{New: func() any { return avro.NewWriter(nil, 512, avro.WithWriterConfig(avroAPI)) }}

// avroCodec is the Confluent-framed Avro codec.
type avroCodec struct {
	reg      msgtype.SchemaRegistry
	subject  string
	text     string      // the reader schema as given, registered on first Encode
	reader   avro.Schema // the schema the code was generated from
	readerFP [32]byte
	// readerPrint is readerFP as written in x-acemq-schema-fingerprint.
	readerPrint string
	// printValue is readerPrint boxed once, as each publish's header value.
	printValue any
	compat     *avro.SchemaCompatibility

	mu sync.Mutex   // serialises registration
	id atomic.Int64 // the reader schema's id once registered, else 0

	writers sync.Map // writer schema id (int) → *avroWriter

	// carry is the writer schema Publish carries in x-acemq-schema (nil
	// with a shared registry, or a schema over MaxCarriedSchema); carried
	// are the writer schemas consumers read from that header, by
	// fingerprint, at most maxCarriedKept of them.
	carry        any
	carried      sync.Map // fingerprint text → *avroWriter
	carriedCount atomic.Int32

	// lastWriter and lastDecoding are the writer and the decoding the
	// last Decode used: a consumer decodes body after body of one writer
	// id under one limit, and an atomic load is cheaper than a sync.Map
	// lookup (an interface hash each) on every message.
	lastWriter   atomic.Pointer[avroWriter]
	lastDecoding atomic.Pointer[avroDecoding]

	lookMu  sync.Mutex
	lookups map[int]*avroLookup // registry lookups in flight, by writer id
}

// avroLookup is one registry lookup of a writer id, which concurrent
// decodes of the same new id wait for instead of each asking the registry.
type avroLookup struct {
	done chan struct{}
	w    *avroWriter
	err  error
}

// avroWriter is what the codec learned about one writer schema id.
type avroWriter struct {
	id         int         // the writer schema id
	print      string      // the writer schema's fingerprint text
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
// error wrapping core.ErrInvalidMessage. Decode looks the writer schema up by
// the body's id (ctx bounds that call; parsed writer schemas are cached by
// id) and, when it differs from the reader schema, resolves it onto the
// reader schema with Avro's rules, so a field the writer lacks is filled
// with its default; a pair that cannot resolve is an error naming the field.
//
// Go values use `avro:"name"` struct tags; logical types map to time.Time
// (timestamp-millis, timestamp-micros, date), *big.Rat (decimal) and string
// (uuid). The codec only uses reg through the msgtype.SchemaRegistry interface, so
// any registry (in memory, files, Confluent HTTP) fits. Safe for concurrent
// use.
func NewAvroCodec(reg msgtype.SchemaRegistry, subject, schema string) (msgtype.Codec, error) {
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
	if l, ok := reg.(learner); ok {
		// The default registry learns the reader schema, so a publisher in
		// another process writing with it is found by id. A collision is
		// Register's error to report, when this codec publishes.
		_, _ = l.learn(reader, schema)
	}
	fpText := fingerprintText(reader)
	var carry any
	if _, unshared := reg.(*FingerprintRegistry); unshared {
		if text := reader.String(); len(text) <= MaxCarriedSchema {
			carry = text
		}
	}
	return &avroCodec{
		carry:       carry,
		reg:         reg,
		subject:     subject,
		text:        schema,
		reader:      reader,
		readerFP:    reader.Fingerprint(),
		readerPrint: fpText,
		printValue:  fpText,
		compat:      avro.NewSchemaCompatibility(),
	}, nil
}

// SchemaFingerprint is what Publish writes in x-acemq-schema-fingerprint.
func (c *avroCodec) SchemaFingerprint() string { return c.readerPrint }

// SchemaFingerprintValue is SchemaFingerprint as a header's value.
func (c *avroCodec) SchemaFingerprintValue() any { return c.printValue }

// WriterSchemaValue is what Publish writes in x-acemq-schema: the writer
// schema when no shared registry is configured, else nil (no header).
func (c *avroCodec) WriterSchemaValue() any { return c.carry }

// ContentType is application/vnd.apache.avro+binary.
func (c *avroCodec) ContentType() string { return wire.ContentTypeAvro }

// Encode writes the Confluent header and v in the reader schema.
func (c *avroCodec) Encode(ctx context.Context, v any) (body []byte, err error) {
	defer codecRecover(&err, "Avro codec: encoding a %T", v)
	id, err := c.schemaID(ctx)
	if err != nil {
		return nil, err
	}
	// Writers in the pool are empty (reset before Put); one whose WriteVal
	// panicked is dropped, not put back.
	w := avroWriters.Get().(*avro.Writer)
	var header [avroHeaderLen]byte // header[0] is the magic byte 0x00
	binary.BigEndian.PutUint32(header[1:], uint32(id))
	_, _ = w.Write(header[:]) // into the buffer: cannot fail
	w.WriteVal(c.reader, v)
	if w.Error != nil {
		err = fmt.Errorf("%w: %w", core.ErrInvalidMessage, w.Error)
	} else {
		// The one copy, out of the pooled buffer, as hamba's Marshal makes.
		body = make([]byte, len(w.Buffer()))
		copy(body, w.Buffer())
	}
	w.Error = nil
	w.Reset(nil)
	avroWriters.Put(w)
	return body, err
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
	id, err := confluentID(body)
	if err != nil {
		return err
	}
	info := core.DecodeInfoOf(ctx)
	if len(body) > info.MaxBody {
		return BodyTooLarge(len(body), info.MaxBody)
	}
	decodeWith := c.reader
	if info.Fingerprint != c.readerPrint {
		// Not written with the reader schema itself (or no header says
		// so): the registry says what id means.
		w := c.lastWriter.Load()
		if w == nil || w.id != id || info.Fingerprint != "" && w.print != "" && info.Fingerprint != w.print {
			if cw, ok := c.carriedKnown(id, info); ok {
				w, err = cw, nil // taken from a message before: no registry miss again
			} else {
				w, err = c.writer(ctx, id)
			}
			if info.Schema != "" && info.Fingerprint != "" &&
				(errors.Is(err, core.ErrSchemaNotFound) || err == nil && w.print != "" && w.print != info.Fingerprint) {
				// The registry does not know the writer's schema (another
				// service's, with no shared registry), or knows another
				// under its id: the message carries it.
				w, err = c.carriedWriter(id, info.Fingerprint, info.Schema)
			}
			if err != nil {
				return err
			}
			c.lastWriter.Store(w)
		}
		if info.Fingerprint != "" && w.print != "" && info.Fingerprint != w.print {
			return fmt.Errorf("writer schema %d: %w: the registry's schema %d has fingerprint %s, the message's %s header says %s (do the publisher and the consumer share a registry?)",
				id, core.ErrSchemaMismatch, id, w.print, wire.HeaderSchemaFingerprint, info.Fingerprint)
		}
		if w.err != nil {
			return w.err
		}
		decodeWith = w.decodeWith
	}
	dec := c.lastDecoding.Load()
	if dec == nil || dec.limit != info.MaxBody {
		dec = avroDecodingFor(info.MaxBody)
		c.lastDecoding.Store(dec)
	}
	if err := avroUnmarshal(dec, decodeWith, body[avroHeaderLen:], v); err != nil {
		return fmt.Errorf("the Avro body (writer schema %d) does not decode: %w", id, err)
	}
	return nil
}

// confluentID reads the Confluent wire format's header: the magic byte 0x00
// and a 4-byte big-endian schema id.
func confluentID(body []byte) (int, error) {
	if len(body) < avroHeaderLen {
		return 0, fmt.Errorf("not in the Confluent wire format: the body is %d bytes, shorter than the 5-byte header (magic byte 0x00, 4-byte schema id)", len(body))
	}
	if body[0] != 0 {
		return 0, fmt.Errorf("not in the Confluent wire format: the first byte is 0x%02x, not the magic byte 0x00", body[0])
	}
	return int(binary.BigEndian.Uint32(body[1:avroHeaderLen])), nil
}

func BodyTooLarge(size, limit int) error {
	return fmt.Errorf("%w: the body is %d bytes, over the consumer's limit of %d bytes (WithMaxBodySize); it was not read", core.ErrBodyTooLarge, size, limit)
}

// avroUnmarshal decodes data into v and, unlike hamba's Unmarshal, treats
// running out of data as the error it is: hamba reports a read past the
// end as io.EOF and its Unmarshal returns nil for io.EOF, so a truncated
// body would decode into zero values. A reader whose ReadVal panicked is
// dropped, not put back (the caller's codecRecover reports the panic).
func avroUnmarshal(dec *avroDecoding, schema avro.Schema, data []byte, v any) error {
	r := dec.readers.Get().(*avro.Reader).Reset(data)
	r.ReadVal(schema, v)
	err := r.Error
	r.Error = nil
	dec.readers.Put(r.Reset(nil))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the body ends too early (%d bytes of Avro data): %w", len(data), io.ErrUnexpectedEOF)
	}
	return err
}

// writer returns how to decode bodies written with schema id, from the
// cache or the registry. Registry failures are returned and not cached
// (they may pass); a writer schema that does not parse or resolve is
// cached, its answer in the avroWriter's err.
func (c *avroCodec) writer(ctx context.Context, id int) (*avroWriter, error) {
	if w, ok := c.writers.Load(id); ok {
		return w.(*avroWriter), nil
	}
	c.lookMu.Lock()
	if l, ok := c.lookups[id]; ok {
		c.lookMu.Unlock()
		select {
		case <-l.done:
			return l.w, l.err
		case <-ctx.Done():
			return nil, fmt.Errorf("look up the writer schema: schema %d: %w", id, ctx.Err())
		}
	}
	l := &avroLookup{done: make(chan struct{})}
	if c.lookups == nil {
		c.lookups = map[int]*avroLookup{}
	}
	c.lookups[id] = l
	c.lookMu.Unlock()
	defer func() {
		c.lookMu.Lock()
		delete(c.lookups, id)
		c.lookMu.Unlock()
		close(l.done)
	}()
	text, err := c.reg.Schema(ctx, id)
	if err != nil {
		l.err = fmt.Errorf("look up the writer schema: %w", err)
		return nil, l.err
	}
	w := c.resolve(id, text)
	actual, _ := c.writers.LoadOrStore(id, w)
	l.w = actual.(*avroWriter)
	return l.w, nil
}

// maxCarriedKept bounds the writer schemas a codec keeps from x-acemq-schema
// headers (a schema per version of another service's message: a few);
// past it a carried schema is parsed and resolved for each message.
const maxCarriedKept = 64

// carriedKnown is the writer schema of id that an earlier message carried
// with info's fingerprint, when the delivery carries one too.
func (c *avroCodec) carriedKnown(id int, info core.DecodeInfo) (*avroWriter, bool) {
	if info.Schema == "" || info.Fingerprint == "" {
		return nil, false
	}
	v, ok := c.carried.Load(info.Fingerprint)
	if !ok {
		return nil, false
	}
	w := v.(*avroWriter)
	return w, w.id == id
}

// carriedWriter returns how to decode bodies of writer schema id that
// carry their schema in x-acemq-schema (text), with the fingerprint fp
// from x-acemq-schema-fingerprint: the schema must be fp's and id the one
// derived from it, or the body is refused (core.ErrSchemaMismatch), never
// decoded with another schema.
func (c *avroCodec) carriedWriter(id int, fp, text string) (*avroWriter, error) {
	if w, ok := c.carried.Load(fp); ok {
		if w := w.(*avroWriter); w.id == id {
			return w, nil
		}
	}
	if len(text) > MaxCarriedSchema {
		return nil, fmt.Errorf("writer schema %d: the %s header is %d bytes, over %d", id, wire.HeaderSchema, len(text), MaxCarriedSchema)
	}
	ws, err := avroParse(text)
	if err != nil {
		return nil, fmt.Errorf("writer schema %d: the %s header: %w", id, wire.HeaderSchema, err)
	}
	if print := fingerprintText(ws); print != fp {
		return nil, fmt.Errorf("writer schema %d: %w: the %s header's schema has fingerprint %s, the %s header says %s",
			id, core.ErrSchemaMismatch, wire.HeaderSchema, print, wire.HeaderSchemaFingerprint, fp)
	}
	if derived := fingerprintID(ws.Fingerprint()); derived != id {
		return nil, fmt.Errorf("writer schema %d: %w: the body's schema id is not %d, the id derived from the %s header's schema",
			id, core.ErrSchemaMismatch, derived, wire.HeaderSchema)
	}
	w := c.resolve(id, text)
	if w.err != nil {
		return nil, w.err
	}
	if c.carriedCount.Add(1) <= maxCarriedKept {
		actual, _ := c.carried.LoadOrStore(fp, w)
		w = actual.(*avroWriter)
	}
	return w, nil
}

// resolve works out how to read what writer schema id wrote.
func (c *avroCodec) resolve(id int, text string) *avroWriter {
	ws, err := avroParse(text)
	if err != nil {
		return &avroWriter{id: id, err: fmt.Errorf("writer schema %d: %w", id, err)}
	}
	print := fingerprintText(ws)
	if ws.Fingerprint() == c.readerFP {
		return &avroWriter{id: id, print: print, decodeWith: c.reader}
	}
	resolved, err := c.compat.Resolve(c.reader, ws)
	if err != nil {
		return &avroWriter{id: id, print: print, err: fmt.Errorf("writer schema %d cannot be read as the reader schema: %s",
			id, avroExplain(c.compat, c.reader, ws, err))}
	}
	return &avroWriter{id: id, print: print, decodeWith: resolved}
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
