// Package cli is the acemq command: the operator's tool for dead letters,
// replays and the live topology. Main runs it as a function, for main and
// for the testscript tests.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acemq/acemq-go/drain"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes.
const (
	ExitOK   = 0
	ExitFail = 1 // the command ran and found a problem: a difference, a message not moved, a broker error
	ExitBad  = 2 // bad input: a usage error, a bad --where, a bad manifest
)

// DefaultURL is the broker when neither --url nor ACEMQ_URL says.
const DefaultURL = "amqp://guest:guest@localhost:5672/"

// defaultURLShown is DefaultURL as help texts show it: passwords are never
// printed, not even the default one.
const defaultURLShown = "amqp://guest:xxxxx@localhost:5672/"

// exitError carries an exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func bad(format string, args ...any) error {
	return &exitError{ExitBad, fmt.Errorf(format, args...)}
}

func failed(err error) error { return &exitError{ExitFail, err} }

// env is what a subcommand runs with.
type env struct {
	stdout, stderr io.Writer
	outTTY, errTTY bool
	url, mgmtURL   string
	mgmtEndpoint   string // the management API in use, without credentials
	connect        time.Duration
	secrets        []string // the passwords the scrubber hides
}

// Main runs acemq with args (without the program name) and returns its
// exit code. Everything it writes passes through a filter that replaces
// any password given in a URL, so none is ever printed.
func Main(args []string, stdout, stderr io.Writer) int {
	secrets := passwords(args)
	e := &env{
		stdout: scrubber{stdout, secrets}, stderr: scrubber{stderr, secrets},
		outTTY: isTerminal(stdout), errTTY: isTerminal(stderr), secrets: secrets,
	}
	root := e.root()
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	code := ExitBad // cobra's own errors are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintf(e.stderr, "acemq: %v\n", err)
	if code == ExitBad && !errors.As(err, &ee) {
		fmt.Fprintln(e.stderr, "run 'acemq --help' for usage")
	}
	return code
}

func (e *env) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "acemq",
		Short: "the operator's command for acemq services: dead letters, replays, the live topology, queue drain",
		Long: `acemq reads dead letters and parked messages without consuming them, puts
them back (replay), compares a manifest's topology with the live broker, and
says whether queues drain.

The broker is --url, else $ACEMQ_URL, else ` + defaultURLShown + `
The management API (topology, drain) is --mgmt-url, else $ACEMQ_MGMT_URL, else
derived from the broker URL (same host and credentials, the AMQP port plus
10000: 15672 for 5672).
Passwords are never printed.

Exit status: 0 done; 1 the command found a problem (differences, messages
that could not be moved, a broker error); 2 bad input.`,
		Example: `  acemq dlq summary orders.new
  acemq dlq peek orders.new -n 5
  acemq replay orders.new.dlq --where 'error~warehouse' --limit 500
  acemq topology diff -f acemq.yaml
  acemq schedule exponential 6 10s 300s
  acemq drain orders.new --max-age 5m`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return e.resolve(cmd)
		},
	}
	root.PersistentFlags().String("url", "", "the broker's AMQP URL (default $ACEMQ_URL, else "+defaultURLShown+")")
	root.PersistentFlags().Duration("connect-timeout", 10*time.Second, "how long to keep trying to reach the broker")
	root.PersistentFlags().String("mgmt-url", "", "the management API's URL (default $ACEMQ_MGMT_URL, else derived from --url)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return bad("%s: %v (see 'acemq %s --help')", c.CommandPath(), err, strings.TrimPrefix(c.CommandPath(), "acemq "))
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(e.queueCommand("dlq", wire.DeadLetterQueue, wire.DeadLetterSuffix, "dead letters"),
		e.queueCommand("parked", wire.ParkedQueue, wire.ParkedSuffix, "parked messages"),
		e.replayCommand(), e.topologyCommand(), e.scheduleCommand(), e.drainCommand(), e.sqlCommand(), e.uiCommand(),
		e.delayedCommand())
	return root
}

// resolve settles the broker and management URLs.
func (e *env) resolve(cmd *cobra.Command) error {
	e.url, _ = cmd.Flags().GetString("url")
	if e.url == "" {
		e.url = os.Getenv("ACEMQ_URL")
	}
	if e.url == "" {
		e.url = DefaultURL
	}
	u, err := url.Parse(e.url)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
		return bad("broker URL %s: want amqp://user:password@host:port/vhost", redact(e.url))
	}
	e.connect, _ = cmd.Flags().GetDuration("connect-timeout")
	if e.connect <= 0 {
		return bad("--connect-timeout %s: want a positive duration", e.connect)
	}
	e.mgmtURL, _ = cmd.Flags().GetString("mgmt-url")
	if e.mgmtURL == "" {
		e.mgmtURL = os.Getenv("ACEMQ_MGMT_URL")
	}
	return nil
}

// dial connects to the broker, bounded by --connect-timeout. The
// runtime's warnings (a broker not there yet) are not shown; its error is.
func (e *env) dial(ctx context.Context) (*runtime.Connection, error) {
	dctx, cancel := context.WithTimeout(ctx, e.connect)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	c, err := runtime.Dial(dctx, e.url, runtime.WithOrigin("acemq@"+hostname()), runtime.WithLogger(quiet))
	if err != nil {
		return nil, failed(err)
	}
	return c, nil
}

// management is a client of the management API and the broker URL's vhost.
func (e *env) management() (*rabbithole.Client, string, error) {
	u, _ := url.Parse(e.url)
	user, pass := "guest", "guest"
	if u.User != nil {
		user = u.User.Username()
		if p, ok := u.User.Password(); ok {
			pass = p
		}
	}
	vhost := strings.TrimPrefix(u.Path, "/")
	if vhost == "" {
		vhost = "/"
	}
	endpoint := e.mgmtURL
	if endpoint == "" {
		endpoint = derivedManagement(u)
	} else {
		m, err := url.Parse(endpoint)
		if err != nil || (m.Scheme != "http" && m.Scheme != "https") || m.Host == "" {
			return nil, "", bad("management URL %s: want http://host:15672", redact(endpoint))
		}
		if m.User != nil {
			user = m.User.Username()
			if p, ok := m.User.Password(); ok {
				pass = p
			}
			m.User = nil
		}
		endpoint = strings.TrimSuffix(m.String(), "/")
	}
	e.mgmtEndpoint = endpoint
	c, err := rabbithole.NewClient(endpoint, user, pass)
	if err != nil {
		return nil, "", failed(fmt.Errorf("management API %s: %w", endpoint, err))
	}
	return c, vhost, nil
}

// managementFailed is the command's failure on err, from a call to the
// management API: when nothing answered on its port, the error names the
// plugin, the command that enables it and the flag that points elsewhere
// (errors.Is(err, drain.ErrNoManagement)).
func (e *env) managementFailed(err error) error {
	var nm *drain.NoManagementError
	if errors.As(drain.ManagementError(e.mgmtEndpoint, err), &nm) {
		return failed(fmt.Errorf("%w, or give its URL with --mgmt-url or $ACEMQ_MGMT_URL", nm))
	}
	return failed(fmt.Errorf("management API: %w", err))
}

// derivedManagement is the management API beside the broker at u: the
// same host, on the AMQP port plus 10000 (5672 → 15672, 5671 → 15671 for
// amqps, 5674 → 15674), the convention of RabbitMQ's defaults.
func derivedManagement(u *url.URL) string {
	scheme, amqpPort := "http", 5672
	if u.Scheme == "amqps" {
		scheme, amqpPort = "https", 5671
	}
	if p, err := strconv.Atoi(u.Port()); err == nil && p > 0 && p+10000 <= 65535 {
		amqpPort = p
	}
	return scheme + "://" + net.JoinHostPort(u.Hostname(), strconv.Itoa(amqpPort+10000))
}

// signalContext is cancelled by Ctrl-C or SIGTERM: a replay stops cleanly.
// withQueue dials, counts queue's messages and calls fn, for the commands
// that read a whole queue (peek, summary, replay); it closes the connection
// when fn returns.
func (e *env) withQueue(queue string, fn func(ctx context.Context, c *runtime.Connection, total int) error) error {
	ctx, cancel := signalContext()
	defer cancel()
	c, err := e.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	total, err := c.MessageCount(ctx, queue)
	if err != nil {
		return failed(err)
	}
	return fn(ctx, c, total)
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// passwordIn finds the user and password of any URL in a text, even one
// that does not parse.
var passwordIn = regexp.MustCompile(`://([^/@:\s]*):([^@\s]+)@`)

// passwords are every URL password in the arguments and the environment,
// as the texts to hide: the password itself, or only ":password@" when it
// is also the user name (guest:guest), so the user name stays readable.
func passwords(args []string) []string {
	var out []string
	texts := append([]string{os.Getenv("ACEMQ_URL"), os.Getenv("ACEMQ_MGMT_URL")}, args...)
	for _, t := range texts {
		for _, m := range passwordIn.FindAllStringSubmatch(t, -1) {
			user, pw := m[1], m[2]
			forms := []string{pw}
			if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
				forms = append(forms, dec)
			}
			for _, f := range forms {
				if f == user || len(f) < 3 {
					out = append(out, ":"+f+"@")
				} else {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// scrubber writes through to w with every secret replaced by xxxxx.
type scrubber struct {
	w       io.Writer
	secrets []string
}

func (s scrubber) Write(p []byte) (int, error) {
	text := string(p)
	for _, sec := range s.secrets {
		if sec != "" {
			repl := "xxxxx"
			if strings.HasPrefix(sec, ":") && strings.HasSuffix(sec, "@") {
				repl = ":xxxxx@"
			}
			text = strings.ReplaceAll(text, sec, repl)
		}
	}
	if _, err := io.WriteString(s.w, text); err != nil {
		return 0, err
	}
	return len(p), nil
}

// redact shows a URL with its password replaced (the scrubber would too).
func redact(raw string) string {
	return passwordIn.ReplaceAllStringFunc(raw, func(m string) string {
		sub := passwordIn.FindStringSubmatch(m)
		return "://" + sub[1] + ":xxxxx@"
	})
}
