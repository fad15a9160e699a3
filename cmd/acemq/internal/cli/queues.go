package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/acemq/acemq-go/cmd/acemq/internal/bodies"
	"github.com/acemq/acemq-go/cmd/acemq/internal/where"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	"github.com/spf13/cobra"
)

// queueName turns what the operator typed (orders.new, orders.new.dlq or
// orders.new.parked) into the queue the subcommand reads.
func queueName(arg string, name func(string) string) string {
	if q, kind, ok := wire.Owner(arg); ok && kind != wire.Rung {
		return name(q)
	}
	return name(arg)
}

// queueCommand is `acemq dlq` or `acemq parked`.
func (e *env) queueCommand(use string, name func(string) string, suffix, what string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: "read the " + what + " of a queue without consuming them",
		Long: "Read the " + what + " of a queue (q" + suffix + ") without consuming them: everything\n" +
			"read is returned to the queue, in its order, when the look is over.\n" +
			"QUEUE is the source queue (orders.new) or q" + suffix + " itself.",
		Example: "  acemq " + use + " count orders.new\n  acemq " + use + " summary orders.new --by type\n  acemq " + use + " peek orders.new" + suffix + " -n 5 --json",
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "count QUEUE",
		Short:   "how many " + what + " the queue holds",
		Example: "  acemq " + use + " count orders.new",
		Args:    exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := queueName(args[0], name)
			ctx, cancel := signalContext()
			defer cancel()
			c, err := e.dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			n, err := c.MessageCount(ctx, q)
			if err != nil {
				return failed(err)
			}
			fmt.Fprintf(e.stdout, "%s: %d\n", q, n)
			return nil
		},
	})

	var n int
	var asJSON bool
	var wheres []string
	var manifest, reg string
	peek := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "a table of the " + what + ": id, type, attempt, first seen, age, reason, body",
		Long: "A table of the " + what + ": id, type, attempt, first seen, age, reason, body.\n" +
			"Text and JSON bodies are shown as they are. Avro bodies are decoded and shown as\n" +
			"JSON with their writer schema: one of the manifest's (-f acemq.yaml), found by\n" +
			"the id in the body, else from the schema registry (--registry, else the\n" +
			"manifest's registry:); without either they are shown as hex.",
		Example: "  acemq " + use + " peek orders.new -n 5\n" +
			"  acemq " + use + " peek orders.new --where 'error~warehouse' --json\n" +
			"  acemq " + use + " peek orders.new -f acemq.yaml",
		Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := where.Parse(wheres)
			if err != nil {
				return bad("%w", err)
			}
			if n < 0 {
				return bad("-n %d: want 0 (all) or more", n)
			}
			var dec *bodies.Decoder
			if manifest != "" || reg != "" {
				if dec, err = bodies.New(manifest, reg); err != nil {
					return bad("%w", err)
				}
			}
			return e.peek(queueName(args[0], name), n, asJSON, f, dec)
		},
	}
	peek.Flags().StringVarP(&manifest, "file", "f", "", "the manifest (acemq.yaml): decode Avro bodies with its schemas (and its registry:)")
	peek.Flags().StringVar(&reg, "registry", "", "decode Avro bodies with this schema registry: a directory, or a Confluent-compatible http(s) URL")
	peek.Flags().IntVarP(&n, "n", "n", 20, "show at most N messages (0: all)")
	peek.Flags().BoolVar(&asJSON, "json", false, "one JSON object per message, every field in full")
	peek.Flags().StringArrayVar(&wheres, "where", nil, "show only matching messages (see acemq replay --help)")
	cmd.AddCommand(peek)

	var by string
	var swheres []string
	summary := &cobra.Command{
		Use:   "summary QUEUE",
		Short: "the " + what + " grouped (by reason, type or queue), with counts, oldest and newest",
		Example: "  acemq " + use + " summary orders.new\n" +
			"  acemq " + use + " summary orders.new --by type",
		Args: exactArgs(1, "QUEUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if by != "reason" && by != "type" && by != "queue" {
				return bad("--by %q: want reason, type or queue", by)
			}
			f, err := where.Parse(swheres)
			if err != nil {
				return bad("%w", err)
			}
			return e.summary(queueName(args[0], name), by, f)
		},
	}
	summary.Flags().StringVar(&by, "by", "reason", "group by reason, type or queue (the queue each came from)")
	summary.Flags().StringArrayVar(&swheres, "where", nil, "count only matching messages")
	cmd.AddCommand(summary)
	return cmd
}

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return bad("%s: want %s (see 'acemq %s --help')", cmd.CommandPath(), names, strings.TrimPrefix(cmd.CommandPath(), "acemq "))
		}
		return nil
	}
}

// Reason is the text that says why a message is where it is: its
// envelope's error (x-acemq-error, or what the broker says it dead-lettered
// it for), else the broker's reason when the library's text hides it.
func Reason(d *runtime.Delivery) string {
	if d.Envelope.Error != "" {
		return d.Envelope.Error
	}
	if death, ok := runtime.BrokerDeath(d.Headers); ok {
		return "dead-lettered by the broker: " + death.Reason
	}
	return ""
}

func whereMessage(d *runtime.Delivery) where.Message {
	return where.Message{Envelope: d.Envelope, Headers: d.Headers, Body: d.Body}
}

// row is one message as peek shows it.
type row struct {
	ID          string         `json:"id"`
	Type        string         `json:"type"`
	Attempt     int            `json:"attempt"`
	FirstSeen   string         `json:"first_seen,omitempty"`
	Age         string         `json:"age,omitempty"`
	Reason      string         `json:"reason"`
	Queue       string         `json:"queue,omitempty"`
	ContentType string         `json:"content_type,omitempty"`
	Replays     int            `json:"replay_count,omitempty"`
	Headers     map[string]any `json:"headers,omitempty"`
	Body        *string        `json:"body,omitempty"`
	BodyBase64  string         `json:"body_base64,omitempty"`
	// An Avro body: the schema it was decoded with (body is then its JSON,
	// body_base64 the bytes), or why it was not (body_base64 only).
	BodySchema string `json:"body_schema,omitempty"`
	BodyError  string `json:"body_error,omitempty"`
}

func rowOf(d *runtime.Delivery, now time.Time) row {
	r := row{ID: d.Envelope.ID, Type: d.Envelope.Type, Attempt: d.Envelope.Attempt, Reason: Reason(d),
		Queue: runtime.OwnQueue(d.Headers), ContentType: d.Envelope.ContentType, Replays: d.Envelope.ReplayCount}
	if fs := d.Envelope.FirstSeen; !fs.IsZero() {
		r.FirstSeen = fs.Format("2006-01-02T15:04:05.000Z")
		r.Age = age(now.Sub(fs))
	}
	return r
}

func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

func (e *env) peek(q string, n int, asJSON bool, f where.Filter, dec *bodies.Decoder) error {
	return e.withQueue(q, func(ctx context.Context, c *runtime.Connection, total int) error {
		now := time.Now()
		var rows []row
		var notes avroNotes
		enc := json.NewEncoder(e.stdout)
		bar := e.progress(e.errTTY, total, "reading "+q)
		seen := 0
		read, err := c.Browse(ctx, q, 0, func(d *runtime.Delivery) error {
			seen++
			bar.step(seen)
			if !f.Match(whereMessage(d), now) || (n > 0 && len(rows) >= n) {
				return nil
			}
			r := rowOf(d, now)
			if bodies.IsAvro(d) {
				avroRow(ctx, &r, d, dec, asJSON, &notes)
			} else if asJSON {
				r.Headers = d.Headers
				if utf8.Valid(d.Body) {
					s := string(d.Body)
					r.Body = &s
				} else {
					r.BodyBase64 = base64.StdEncoding.EncodeToString(d.Body)
				}
			} else {
				s := preview(d.Body)
				r.Body = &s
			}
			rows = append(rows, r)
			return nil
		})
		bar.done()
		if err != nil {
			return failed(fmt.Errorf("reading %s (everything read goes back): %w", q, err))
		}
		if asJSON {
			for _, r := range rows {
				if err := enc.Encode(r); err != nil {
					return failed(err)
				}
			}
			return nil
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTYPE\tATTEMPT\tFIRST SEEN\tAGE\tREASON\tBODY")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", dash(r.ID), dash(r.Type), r.Attempt, dash(r.FirstSeen), dash(r.Age), dash(cut(r.Reason, 70)), *r.Body)
		}
		tw.Flush()
		fmt.Fprintf(e.stdout, "%d of %d %s in %s shown; all left in place\n", len(rows), read, plural(read, "message", "messages"), q)
		notes.print(e.stdout)
		return nil
	})
}

// avroNotes counts the Avro bodies of a peek that are shown as hex, and
// why, for the lines under the table.
type avroNotes struct {
	noSchemas int            // neither -f nor --registry
	failed    map[string]int // why → bodies
}

func (a *avroNotes) print(w io.Writer) {
	if a.noSchemas > 0 {
		fmt.Fprintf(w, "%d Avro %s shown as hex: give -f acemq.yaml (its schemas and its registry:) or --registry DIR|URL to decode them\n", a.noSchemas, plural(a.noSchemas, "body", "bodies"))
	}
	whys := make([]string, 0, len(a.failed))
	for why := range a.failed {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	for _, why := range whys {
		n := a.failed[why]
		fmt.Fprintf(w, "%d Avro %s shown as hex: %s\n", n, plural(n, "body", "bodies"), why)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// avroRow fills r's body from an Avro delivery: its JSON when it decodes,
// else hex (base64 in --json) with why.
func avroRow(ctx context.Context, r *row, d *runtime.Delivery, dec *bodies.Decoder, asJSON bool, notes *avroNotes) {
	var text, with string
	err := errors.New("")
	if dec != nil {
		text, with, err = dec.Decode(ctx, d)
	}
	switch {
	case err == nil:
		r.Body, r.BodySchema = &text, with
		if asJSON {
			r.BodyBase64 = base64.StdEncoding.EncodeToString(d.Body)
		} else {
			s := preview([]byte(text))
			r.Body = &s
		}
		return
	case dec == nil:
		notes.noSchemas++
	default:
		if notes.failed == nil {
			notes.failed = map[string]int{}
		}
		notes.failed[err.Error()]++
		r.BodyError = err.Error()
	}
	if asJSON {
		r.BodyBase64 = base64.StdEncoding.EncodeToString(d.Body)
		return
	}
	s := hexPreview(d.Body)
	r.Body = &s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cut shortens s to n runes with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// preview is the start of a body on one line: text as text, anything else
// as hex.
func preview(b []byte) string {
	const max = 40
	if !utf8.Valid(b) {
		return hexPreview(b)
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	return cut(s, max)
}

// hexPreview is the start of a body in hex.
func hexPreview(b []byte) string {
	const max = 40
	if len(b) > max/2 {
		return fmt.Sprintf("%x…", b[:max/2])
	}
	return fmt.Sprintf("%x", b)
}

type group struct {
	key            string
	count          int
	oldest, newest time.Time
}

func (e *env) summary(q, by string, f where.Filter) error {
	return e.withQueue(q, func(ctx context.Context, c *runtime.Connection, total int) error {
		now := time.Now()
		groups := map[string]*group{}
		matched := 0
		bar := e.progress(e.errTTY, total, "reading "+q)
		seen := 0
		read, err := c.Browse(ctx, q, 0, func(d *runtime.Delivery) error {
			seen++
			bar.step(seen)
			if !f.Match(whereMessage(d), now) {
				return nil
			}
			matched++
			var key string
			switch by {
			case "reason":
				key = Reason(d)
			case "type":
				key = d.Envelope.Type
			case "queue":
				key = runtime.OwnQueue(d.Headers)
			}
			g := groups[key]
			if g == nil {
				g = &group{key: key}
				groups[key] = g
			}
			g.count++
			if fs := d.Envelope.FirstSeen; !fs.IsZero() {
				if g.oldest.IsZero() || fs.Before(g.oldest) {
					g.oldest = fs
				}
				if fs.After(g.newest) {
					g.newest = fs
				}
			}
			return nil
		})
		bar.done()
		if err != nil {
			return failed(fmt.Errorf("reading %s (everything read goes back): %w", q, err))
		}
		list := make([]*group, 0, len(groups))
		for _, g := range groups {
			list = append(list, g)
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].count != list[j].count {
				return list[i].count > list[j].count
			}
			return list[i].key < list[j].key
		})
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "COUNT\tOLDEST\tNEWEST\t%s\n", strings.ToUpper(by))
		for _, g := range list {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", g.count, stamp(g.oldest), stamp(g.newest), dash(g.key))
		}
		tw.Flush()
		groupsWord := "groups"
		if len(list) == 1 {
			groupsWord = "group"
		}
		fmt.Fprintf(e.stdout, "%d %s in %s, %d %s; all left in place\n", matched, plural(matched, "message", "messages"), q, len(list), groupsWord)
		_ = read
		return nil
	})
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}
