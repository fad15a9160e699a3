package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/bodies"
	"github.com/acemq/acemq-go/cmd/acemq/internal/topo"
	"github.com/acemq/acemq-go/cmd/acemq/internal/ui"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"
)

// uiCommand is `acemq ui`: the web console.
func (e *env) uiCommand() *cobra.Command {
	var (
		file, listen, tokenFile, audit, archive, reg string
		tokens, queues, hosts                        []string
		remote                                       bool
		maxRows                                      int
	)
	cmd := &cobra.Command{
		Use:   "ui -f acemq.yaml",
		Short: "a web console over the failed messages, the replays and the topology",
		Long: `ui serves a web page over the failed messages of the manifest's queues (each
queue's .dlq and .parked, and any --queue): grouped by reason (ids, numbers
and quoted values folded), queue, type and origin, searched, opened (the
body decoded with the manifest's schemas), replayed, edited and retried,
discarded to an archive queue; every action is written to the audit file;
and the manifest's topology against the live broker. The page and its
script are in the binary: nothing is fetched from elsewhere.

It listens on 127.0.0.1 unless --listen says otherwise; any other address
needs --allow-remote too (and prints a warning): the console shows message
bodies. It answers only to the address it listens on, the loopback names
and each --host (the name browsers use to reach it), against DNS
rebinding: on a wildcard address (0.0.0.0, [::]) --allow-remote needs a
--host. Without --token or --token-file (or $ACEMQ_UI_TOKEN) it is
read-only; with them, a signed-in token holder (or a script with
Authorization: Bearer) may act, and the audit log names the token.
A token is NAME:SECRET, or SECRET alone (named "operator"); a token file
holds one a line. docs/operations.md, "The console", is its manual.`,
		Example: `  acemq ui -f acemq.yaml
  acemq ui -f acemq.yaml --token-file /etc/acemq/ui-tokens --listen 127.0.0.1:8080
  acemq ui -f acemq.yaml --listen 0.0.0.0:8080 --allow-remote --host console.internal --token-file tokens`,
		Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" && len(queues) == 0 {
				return bad("-f is required: the manifest (acemq.yaml), or name queues with --queue")
			}
			secrets := map[string]string{}
			if env := os.Getenv("ACEMQ_UI_TOKEN"); env != "" {
				tokens = append(tokens, env)
			}
			for _, t := range tokens {
				name, secret, err := ui.ParseToken(t)
				if err != nil {
					return bad("--token: %w", err)
				}
				secrets[secret] = name
			}
			if tokenFile != "" {
				m, err := ui.ReadTokenFile(tokenFile)
				if err != nil {
					return bad("--token-file: %w", err)
				}
				for k, v := range m {
					secrets[k] = v
				}
			}
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				return bad("--listen %s: want host:port (127.0.0.1:8080)", listen)
			}
			loopback := host == "localhost"
			if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
				loopback = true
			}
			if !loopback && !remote {
				return bad("--listen %s: not a loopback address; the console shows message bodies: add --allow-remote to mean it (and give it a token and TLS in front)", listen)
			}
			if ip := net.ParseIP(host); (host == "" || ip != nil && ip.IsUnspecified()) && len(hosts) == 0 {
				return bad("--listen %s: a wildcard address; name the host browsers use to reach the console with --host (it answers only to its address, the loopback names and --host: DNS rebinding)", listen)
			}
			for _, h := range hosts {
				if h == "" || strings.ContainsAny(h, "/ ") {
					return bad("--host %q: want a host name, or host:port", h)
				}
			}
			return e.serveUI(uiOptions{file: file, listen: listen, secrets: secrets, audit: audit, archive: archive,
				queues: queues, hosts: hosts, remote: !loopback, reg: reg, maxRows: maxRows})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&file, "file", "f", "", "the manifest (acemq.yaml): its queues' .dlq and .parked, its schemas, its topology")
	fl.StringVar(&listen, "listen", "127.0.0.1:8080", "the address to serve on (host:port); not loopback: needs --allow-remote")
	fl.BoolVar(&remote, "allow-remote", false, "allow --listen on an address other than loopback")
	fl.StringArrayVar(&hosts, "host", nil, "a host name (or host:port, a proxy's) browsers use to reach the console; other Host headers are refused (repeatable; needed with --allow-remote on 0.0.0.0)")
	fl.StringArrayVar(&tokens, "token", nil, "a token that allows actions, NAME:SECRET or SECRET (repeatable; visible in ps: prefer --token-file or $ACEMQ_UI_TOKEN)")
	fl.StringVar(&tokenFile, "token-file", "", "a file of tokens, one NAME:SECRET a line")
	fl.StringVar(&audit, "audit", "", "the audit file (JSON lines; default acemq-audit.jsonl beside the manifest)")
	fl.StringVar(&archive, "archive", "", "where a discard moves messages (default: the source queue's name + .archived)")
	fl.StringArrayVar(&queues, "queue", nil, "read this queue too (a .dlq, a .parked, or a queue whose .dlq and .parked are read); a replay may send to it")
	fl.StringVar(&reg, "registry", "", "decode Avro bodies with this schema registry too: a directory, or a Confluent-compatible http(s) URL")
	fl.IntVar(&maxRows, "max-rows", ui.DefaultMaxRows, "how many messages the index lists (past it they are counted, not listed)")
	return cmd
}

type uiOptions struct {
	file, listen, audit, archive, reg string
	secrets                           map[string]string
	queues, hosts                     []string
	remote                            bool
	maxRows                           int
}

func (e *env) serveUI(o uiOptions) error {
	cfg := ui.Config{File: o.file, Queues: o.queues, Tokens: o.secrets, Archive: o.archive, Hosts: o.hosts, MaxRows: o.maxRows,
		Scrub: func(s string) string { return redact(scrubText(s, e.secrets)) }}
	if o.file != "" {
		m, err := topo.Load(o.file)
		if err != nil {
			return &exitError{ExitBad, err}
		}
		cfg.Manifest = m
		if o.audit == "" {
			o.audit = filepath.Join(filepath.Dir(o.file), "acemq-audit.jsonl")
		}
		client, vhost, err := e.management()
		if err != nil {
			return err
		}
		cfg.Topology = ui.NewTopology(client, vhost, m)
	}
	if o.file != "" || o.reg != "" {
		dec, err := bodies.New(o.file, o.reg)
		if err != nil {
			return bad("%w", err)
		}
		cfg.Bodies = dec
		cfg.Registry = dec.Registry()
	}
	cfg.AuditFile = o.audit
	cfg.Log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := signalContext()
	defer cancel()
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	cfg.Conn = c
	url := e.url
	cfg.Declare = func(ctx context.Context, queue string) error { return declareQueue(ctx, url, queue) }
	s, err := ui.New(cfg)
	if err != nil {
		return bad("%w", err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return failed(fmt.Errorf("listen %s: %w", o.listen, err))
	}
	if o.remote {
		fmt.Fprintf(e.stderr, "acemq: WARNING: the console listens on %s, beyond loopback: anyone who reaches it reads the message bodies", ln.Addr())
		if len(o.secrets) == 0 {
			fmt.Fprint(e.stderr, " (read-only: no token)")
		}
		fmt.Fprintln(e.stderr, "; put TLS and a firewall in front of it")
	}
	mode := "read-only (no --token)"
	if len(o.secrets) > 0 {
		names := map[string]bool{}
		for _, n := range o.secrets {
			names[n] = true
		}
		mode = fmt.Sprintf("actions allowed to %d token(s)", len(names))
	}
	fmt.Fprintf(e.stdout, "acemq ui: http://%s/ — %s; audit file %s\n", ln.Addr(), mode, dashEmpty(o.audit))
	s.Run(ctx)
	if err := s.Serve(ctx, ln); err != nil {
		return failed(err)
	}
	return nil
}

func dashEmpty(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// scrubText is text with every secret replaced, as the scrubber writes.
func scrubText(text string, secrets []string) string {
	var b strings.Builder
	_, _ = scrubber{&b, secrets}.Write([]byte(text))
	return b.String()
}

// declareQueue declares queue, durable and classic, when it is missing
// (an archive of discarded messages): a passive declare first, so an
// archive that exists with other arguments is used as it is.
func declareQueue(ctx context.Context, rawURL, queue string) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := amqp.DialConfig(rawURL, amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(dctx, network, addr)
	}})
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil); err == nil {
		return nil
	} else if !errors.Is(err, amqp.ErrClosed) {
		var ae *amqp.Error
		if !errors.As(err, &ae) || ae.Code != amqp.NotFound {
			return err
		}
	}
	ch, err = conn.Channel()
	if err != nil {
		return err
	}
	_, err = ch.QueueDeclare(queue, true, false, false, false, nil)
	return err
}
