package bodies

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/internal/gen/schema"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/registry"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/hamba/avro/v2"
)

// Decoder decodes Avro bodies (the Confluent wire format: 0x00, a
// 4-byte schema id, Avro binary) for acemq dlq peek and acemq ui: with the writer schema, found
// among the manifest's Avro schemas by the id acemq derives from a schema
// (registry.SchemaID), else in the schema registry (--registry, else the
// manifest's registry: block). The body is shown as JSON in the writer
// schema's field order, as the writer wrote it: nothing is resolved onto a
// reader schema, so an operator sees every field the dead letter holds.
type Decoder struct {
	file     string // the manifest, "" when none
	byID     map[int]avroWriter
	byType   map[string]string // AMQP type → "OrderPlaced (schema 123)"
	reg      runtime.SchemaRegistry
	regName  string // what --registry or the manifest named
	regErr   error  // why no registry could be opened
	fromReg  map[int]avroWriter
	notFound map[int]error
}

// avroWriter is one writer schema and where it came from.
type avroWriter struct {
	schema avro.Schema
	print  string // x-acemq-schema-fingerprint's form
	from   string // "acemq.yaml: OrderPlaced" or "registry DIR"
}

// New reads the manifest's Avro schemas and opens the registry:
// flag (a directory or an http(s) URL) over the manifest's registry:
// block. A manifest that does not load is a bad-input error; a registry
// that cannot be opened is reported on the first body that needs it.
func New(file, reg string) (*Decoder, error) {
	b := &Decoder{file: file, byID: map[int]avroWriter{}, byType: map[string]string{}, fromReg: map[int]avroWriter{}, notFound: map[int]error{}}
	var cfg *registry.Config
	if file != "" {
		m, err := topo.Load(file)
		if err != nil {
			return nil, err
		}
		for _, msg := range m.Messages {
			if msg.Format != schema.Avro {
				continue
			}
			id, err := registry.SchemaID(msg.SchemaText)
			if err != nil {
				return nil, fmt.Errorf("%s: message %s: %w", file, msg.Name, err)
			}
			w, err := parseWriter(msg.SchemaText, filepath.Base(file)+": "+msg.Name)
			if err != nil {
				return nil, fmt.Errorf("%s: message %s: %w", file, msg.Name, err)
			}
			b.byID[id] = w
			b.byType[msg.Type] = fmt.Sprintf("%s (schema %d)", msg.Name, id)
		}
		if r := m.Registry; r != nil {
			dir := r.Directory
			if dir != "" && !filepath.IsAbs(dir) && !strings.Contains(dir, "${") {
				dir = filepath.Join(filepath.Dir(file), dir)
			}
			cfg = &registry.Config{Directory: dir, URL: r.URL, UsernameEnv: r.UsernameEnv, PasswordEnv: r.PasswordEnv,
				TokenEnv: r.TokenEnv, Timeout: r.Timeout, LookupOnly: true}
			b.regName = file + "'s registry: " + cmpOr(r.Directory, r.URL)
		}
	}
	if reg != "" {
		cfg = &registry.Config{LookupOnly: true}
		if strings.HasPrefix(reg, "http://") || strings.HasPrefix(reg, "https://") {
			cfg.URL = reg
		} else {
			cfg.Directory = reg
		}
		b.regName = "registry " + reg
	}
	if cfg != nil {
		if cfg.Directory != "" {
			// A look never creates a registry (registry.Open would).
			if _, err := os.Stat(os.ExpandEnv(cfg.Directory)); err != nil {
				b.regErr = fmt.Errorf("%s: %w", b.regName, err)
				return b, nil
			}
		}
		r, err := registry.Open(*cfg)
		if err != nil {
			b.regErr = fmt.Errorf("%s: %w", b.regName, err)
		}
		b.reg = r
	}
	return b, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func parseWriter(text, from string) (avroWriter, error) {
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return avroWriter{}, err
	}
	print, err := registry.SchemaFingerprint(text)
	if err != nil {
		return avroWriter{}, err
	}
	return avroWriter{schema: s, print: print, from: from}, nil
}

// IsAvro reports whether d's body is meant as Avro: its content type says
// so, or it has none and starts with the magic byte.
func IsAvro(d *runtime.Delivery) bool {
	ct := d.Envelope.ContentType
	return ct == wire.ContentTypeAvro || ct == "" && len(d.Body) >= 5 && d.Body[0] == 0
}

// Decode returns d's body as JSON text and the schema it was read with
// ("schema 123 (acemq.yaml: OrderPlaced)"), or why it could not be.
func (b *Decoder) Decode(ctx context.Context, d *runtime.Delivery) (text, with string, err error) {
	body := d.Body
	if len(body) < 5 || body[0] != 0 {
		return "", "", errors.New("not in the Confluent wire format (magic byte 0x00 and a 4-byte schema id)")
	}
	id := int(binary.BigEndian.Uint32(body[1:5]))
	header, _ := d.Headers[wire.HeaderSchemaFingerprint].(string)
	w, err := b.writer(ctx, id, header, d.Envelope.Type)
	if err != nil {
		// Neither the manifest nor the registry has it: a producer with no
		// shared registry carries its writer schema in the message.
		carried, _ := d.Headers[wire.HeaderSchema].(string)
		cw, ok := carriedWriter(id, header, carried)
		if !ok {
			return "", "", err
		}
		w = cw
	}
	var v any
	r := avro.NewReader(bytes.NewReader(body[5:]), len(body)-5)
	r.ReadVal(w.schema, &v)
	if r.Error != nil {
		return "", "", fmt.Errorf("does not decode with schema %d (%s): %w", id, w.from, r.Error)
	}
	var out strings.Builder
	avroJSON(&out, w.schema, v)
	return out.String(), fmt.Sprintf("schema %d (%s)", id, w.from), nil
}

// carriedWriter is the writer schema a message carries in x-acemq-schema,
// when its fingerprint is header's and the id derived from it is the
// body's id, as the runtime's consumer takes it; false otherwise.
func carriedWriter(id int, header, carried string) (avroWriter, bool) {
	if carried == "" || header == "" || len(carried) > runtime.MaxCarriedSchema {
		return avroWriter{}, false
	}
	w, err := parseWriter(carried, "the message's "+wire.HeaderSchema)
	if err != nil || w.print != header {
		return avroWriter{}, false
	}
	if derived, err := registry.SchemaID(carried); err != nil || derived != id {
		return avroWriter{}, false
	}
	return w, true
}

// writer finds the writer schema of id: the manifest's, else the
// registry's; one whose fingerprint is not the header's (when the message
// has one) is not used.
func (b *Decoder) writer(ctx context.Context, id int, header, typ string) (avroWriter, error) {
	var mismatch error
	if w, ok := b.byID[id]; ok {
		if header == "" || header == w.print {
			return w, nil
		}
		mismatch = fmt.Errorf("schema %d of %s has fingerprint %s, the message's %s says %s", id, w.from, w.print, wire.HeaderSchemaFingerprint, header)
	}
	if w, ok := b.fromReg[id]; ok {
		if header == "" || header == w.print {
			return w, nil
		}
		return avroWriter{}, fmt.Errorf("schema %d of the %s has fingerprint %s, the message's %s says %s", id, b.regName, w.print, wire.HeaderSchemaFingerprint, header)
	}
	if err, ok := b.notFound[id]; ok {
		return avroWriter{}, err
	}
	err := b.lookup(ctx, id, typ)
	if err == nil {
		return b.writer(ctx, id, header, typ)
	}
	if mismatch != nil {
		err = fmt.Errorf("%w; %w", mismatch, err)
	}
	if !errors.Is(err, runtime.ErrRegistryUnavailable) {
		b.notFound[id] = err
	}
	return avroWriter{}, err
}

func (b *Decoder) lookup(ctx context.Context, id int, typ string) error {
	where := "no Avro message of " + b.file + " has it"
	if m, ok := b.byType[typ]; ok {
		// The manifest's schema of this type changed since the body was
		// written: the old one is only in a registry (or the history).
		where = fmt.Sprintf("not in %s, whose %s is %s: written with another version of its schema", b.file, typ, m)
	}
	if b.file == "" {
		where = "no manifest given (-f acemq.yaml)"
	}
	switch {
	case b.regErr != nil:
		return fmt.Errorf("schema %d: %s, and the registry cannot be opened: %w", id, where, b.regErr)
	case b.reg == nil:
		return fmt.Errorf("schema %d: %s, and no registry to ask (--registry DIR|URL, or the manifest's registry:)", id, where)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := b.reg.Schema(ctx, id)
	if err != nil {
		return fmt.Errorf("schema %d: %s; the %s: %w", id, where, b.regName, err)
	}
	w, err := parseWriter(text, b.regName)
	if err != nil {
		return fmt.Errorf("schema %d of the %s: %w", id, b.regName, err)
	}
	b.fromReg[id] = w
	return nil
}

// avroJSON writes v, decoded with s, as JSON: records in field order,
// maps by key, bytes and fixed as Avro's JSON encoding has them (a string
// of code points 0-255), decimals as numbers, timestamps as RFC 3339.
func avroJSON(out *strings.Builder, s avro.Schema, v any) {
	if v == nil {
		out.WriteString("null")
		return
	}
	switch s := s.(type) {
	case *avro.RefSchema:
		avroJSON(out, s.Schema(), v)
		return
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		out.WriteByte('{')
		for i, f := range s.Fields() {
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSON(out, f.Name())
			out.WriteByte(':')
			avroJSON(out, f.Type(), m[f.Name()])
		}
		out.WriteByte('}')
		return
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			break
		}
		out.WriteByte('[')
		for i, x := range a {
			if i > 0 {
				out.WriteByte(',')
			}
			avroJSON(out, s.Items(), x)
		}
		out.WriteByte(']')
		return
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSON(out, k)
			out.WriteByte(':')
			avroJSON(out, s.Values(), m[k])
		}
		out.WriteByte('}')
		return
	case *avro.UnionSchema:
		// hamba gives a union's value itself: the branch is the first
		// that takes it.
		for _, t := range s.Types() {
			if t.Type() != avro.Null && fits(t, v) {
				avroJSON(out, t, v)
				return
			}
		}
	}
	switch x := v.(type) {
	case []byte:
		writeJSON(out, latin1(x))
	case *big.Rat:
		scale := 0
		if l, ok := s.(avro.LogicalTypeSchema); ok {
			if d, ok := l.Logical().(*avro.DecimalLogicalSchema); ok {
				scale = d.Scale()
			}
		}
		out.WriteString(x.FloatString(scale))
	case float32:
		out.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	default:
		if b, ok := fixedBytes(v); ok {
			writeJSON(out, latin1(b))
			return
		}
		writeJSON(out, v)
	}
}

// fits reports whether v (as hamba decodes) is of schema t's kind.
func fits(t avro.Schema, v any) bool {
	if r, ok := t.(*avro.RefSchema); ok {
		t = r.Schema()
	}
	switch t.(type) {
	case *avro.RecordSchema, *avro.MapSchema:
		_, ok := v.(map[string]any)
		if rs, isRecord := t.(*avro.RecordSchema); ok && isRecord {
			m := v.(map[string]any)
			for _, f := range rs.Fields() {
				if _, has := m[f.Name()]; !has {
					return false
				}
			}
		}
		return ok
	case *avro.ArraySchema:
		_, ok := v.([]any)
		return ok
	}
	return true
}

// fixedBytes is a fixed's value (hamba decodes it as an [n]byte).
func fixedBytes(v any) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Array || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil, false
	}
	b := make([]byte, rv.Len())
	for i := range b {
		b[i] = byte(rv.Index(i).Uint())
	}
	return b, true
}

func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func writeJSON(out *strings.Builder, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	out.Write(b)
}

// Registry is the schema registry the decoder asks (--registry, else the
// manifest's registry:), nil when there is none or it could not be
// opened: the registry an edited Avro body is encoded with.
func (b *Decoder) Registry() runtime.SchemaRegistry {
	if b == nil || b.regErr != nil || b.reg == nil {
		return nil
	}
	return b.reg
}
