package runtime

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/acemq/acemq-go/runtime/internal/amqpx"
	"github.com/acemq/acemq-go/runtime/internal/core"
)

var (
	// ErrClosed is returned by calls on a Connection or Consumer that was
	// closed.
	ErrClosed = core.ErrClosed
	// ErrUnroutable is returned by a publish that the broker returned
	// (mandatory): no queue is bound for its exchange and routing key.
	ErrUnroutable = core.ErrUnroutable
	// ErrNacked is returned by a publish the broker refused (basic.nack).
	ErrNacked = core.ErrNacked
	// ErrQueueNotFound is returned for a queue that does not exist.
	ErrQueueNotFound = core.ErrQueueNotFound
	// ErrExchangeNotFound is returned by a publish to an exchange that does
	// not exist; nothing was sent.
	ErrExchangeNotFound = core.ErrExchangeNotFound
	// ErrRegistryUnavailable is wrapped by a schema registry's errors that
	// may pass (a registry that does not answer). A consumer that meets one
	// while decoding returns the message to its queue after a pause instead
	// of parking it.
	ErrRegistryUnavailable = core.ErrRegistryUnavailable
	// ErrSchemaNotFound is returned by a registry for an unknown id.
	ErrSchemaNotFound = core.ErrSchemaNotFound
	// ErrSchemaIDCollision is matched by a SchemaIDCollisionError: two
	// schemas whose derived ids are equal.
	ErrSchemaIDCollision = core.ErrSchemaIDCollision
	// ErrSchemaMismatch is matched by a decode error for a body whose
	// x-acemq-schema-fingerprint header names another schema than the one
	// the consumer's registry holds under the body's id: the publisher and
	// the consumer do not share a registry. Such a body is parked, never
	// decoded with the wrong schema.
	ErrSchemaMismatch = core.ErrSchemaMismatch
	// ErrBodyTooLarge is matched by the decode error of a body over the
	// consumer's WithMaxBodySize; such a body is parked unread.
	ErrBodyTooLarge = core.ErrBodyTooLarge
	// ErrInvalidMessage is matched by every error for a message that breaks
	// its schema on publish, or that AMQP cannot carry (an exchange,
	// routing key, property or header name over 255 bytes, a header value
	// of no AMQP type, properties and headers over the broker's
	// frame_max); such a message is never sent, and the error names what
	// is wrong.
	ErrInvalidMessage = core.ErrInvalidMessage

	// ErrAuth is matched by a Dial error the broker gave on login: wrong
	// user or password (403 ACCESS_REFUSED), a vhost that does not exist or
	// that the user may not use (530 NOT_ALLOWED). Retrying cannot fix it,
	// so Dial returns it at once.
	ErrAuth = core.ErrAuth
	// ErrUnreachable is matched by a Dial error for a broker that is not
	// there: connection refused, DNS failure, timeout, a broker shutting
	// down, a connection closed or reset before the AMQP handshake
	// completed (a broker starting up, a load balancer with no broker
	// behind it). Dial keeps trying such errors until its ctx is done.
	// Such an error also matches ErrUnavailable.
	ErrUnreachable = core.ErrUnreachable
	// ErrInvalidURL is matched by a Dial error for a URL that does not
	// parse or whose scheme is not amqp:// or amqps://.
	ErrInvalidURL = core.ErrInvalidURL
	// ErrUnavailable is matched by the error of a call that failed because
	// the broker could not be reached or its connection was lost: an outage,
	// a restart, a connection cut or blocked. It is a window, not a state:
	// try again later (with backoff), do not stop for good. A publish that
	// fails with it may or may not have reached the broker when the failure
	// came after the write. It is matched alongside the cause (a DialError
	// matching ErrUnreachable, ErrBlocked, amqp091-go's error).
	ErrUnavailable = core.ErrUnavailable
	// ErrBlocked is matched by a publish refused at once because the broker
	// has blocked the connection (connection.blocked: a memory or disk
	// alarm). Its text carries the broker's reason; it also matches
	// ErrUnavailable. Nothing was sent.
	ErrBlocked = core.ErrBlocked
)

// DialError is a connection that could not be made. Its Error() names the
// address with the password redacted; errors.Is matches Kind (ErrAuth,
// ErrUnreachable, ErrInvalidURL; nil when none applies), ErrUnavailable
// with ErrUnreachable, and errors.Is and errors.As reach the cause (an *amqp.Error, a *net.OpError,
// syscall.ECONNREFUSED, context.DeadlineExceeded, ...).
type DialError struct {
	// Address is the broker URL tried, password redacted (a comma-separated
	// list when every address was tried).
	Address string
	// Kind is the sentinel the failure matches, or nil.
	Kind error
	// Err is the cause, as amqp091-go or the network returned it. Its text
	// may quote the URL: print the DialError, not Err.
	Err error

	secrets []address // the addresses whose URLs and passwords are scrubbed from Err's text
}

func (e *DialError) Error() string {
	var b strings.Builder
	b.WriteString("dial")
	if e.Address != "" {
		b.WriteString(" " + e.Address)
	}
	b.WriteString(": ")
	switch e.Kind {
	case ErrAuth:
		b.WriteString("the broker refused the login (check the user, the password and the vhost): ")
	case ErrUnreachable:
		b.WriteString("broker unreachable: ")
	case ErrInvalidURL:
		b.WriteString("invalid broker URL (want amqp:// or amqps://): ")
	}
	b.WriteString(e.cause())
	return b.String()
}

// cause is Err's text with every URL and password of the attempt redacted:
// as written, quoted the way errors quote (url.Parse's %q, strconv.Quote),
// and percent-decoded; and a quoted fragment of a URL (url.Parse's `invalid
// port ":pa"`) that overlaps the URL's password is replaced whole.
func (e *DialError) cause() string {
	if e.Err == nil {
		return "unknown error"
	}
	s := e.Err.Error()
	// URLs first, through placeholders, so that scrubbing a password does
	// not touch the user name of a redacted URL.
	var urls []string
	for _, a := range e.secrets {
		ph := fmt.Sprintf("\x00%d\x00", len(urls))
		for _, form := range spellings(a.raw) {
			s = strings.ReplaceAll(s, form, ph)
		}
		urls = append(urls, a.raw)
	}
	for _, a := range e.secrets {
		if a.secret == "" {
			continue
		}
		forms := spellings(a.secret)
		if dec, err := url.PathUnescape(a.secret); err == nil && dec != a.secret {
			forms = append(forms, spellings(dec)...)
		}
		for _, form := range forms {
			s = strings.ReplaceAll(s, form, "xxxxx")
		}
	}
	s = quotedLiteral.ReplaceAllStringFunc(s, func(lit string) string {
		frag, err := strconv.Unquote(lit)
		// A raw NUL is one of the placeholders (%q escapes a NUL).
		if err != nil || frag == "" || strings.Contains(lit, "\x00") {
			return lit
		}
		for _, u := range urls {
			if overlapsPassword(u, frag) {
				return `"xxxxx"`
			}
		}
		return lit
	})
	for i, u := range urls {
		r := redactURL(u)
		ph := fmt.Sprintf("\x00%d\x00", i)
		// A placeholder in a quoted text stands for the quoted URL.
		s = strings.ReplaceAll(s, `"`+ph+`"`, strconv.Quote(r))
		s = strings.ReplaceAll(s, ph, r)
	}
	return s
}

// quotedLiteral is a double-quoted Go string literal in an error's text.
var quotedLiteral = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// spellings are the ways an error text may spell s: as written, and inside
// the quotes of %q (strconv.Quote) and %+q (strconv.QuoteToASCII).
func spellings(s string) []string {
	forms := []string{s}
	for _, q := range []string{strconv.Quote(s), strconv.QuoteToASCII(s)} {
		if q = q[1 : len(q)-1]; q != s && !slices.Contains(forms, q) {
			forms = append(forms, q)
		}
	}
	return forms
}

// overlapsPassword reports whether frag occurs in rawURL where it covers
// two bytes or more of rawURL's password, or all of it.
func overlapsPassword(rawURL, frag string) bool {
	pass := passwordOf(rawURL)
	if pass == "" {
		return false
	}
	at := strings.LastIndex(rawURL, pass+"@")
	if at < 0 {
		return false
	}
	end := at + len(pass)
	for i := 0; ; {
		j := strings.Index(rawURL[i:], frag)
		if j < 0 {
			return false
		}
		j += i
		// Two bytes or the whole password: a one-byte overlap is most
		// often a quoted separator ("/", "#") of a help text.
		if n := min(j+len(frag), end) - max(j, at); n >= 2 || (n > 0 && n == len(pass)) {
			return true
		}
		i = j + 1
	}
}

// Unwrap returns the kind and the cause, so that errors.Is and errors.As
// see both; a broker that is not there (ErrUnreachable) is also a window
// of unavailability (ErrUnavailable).
func (e *DialError) Unwrap() []error {
	out := make([]error, 0, 3)
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Kind == ErrUnreachable {
		out = append(out, ErrUnavailable)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// unavailableError marks err as a window of unavailability (ErrUnavailable)
// without changing its text.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// blockedError is a publish refused because the broker blocked the
// connection; it matches ErrBlocked and ErrUnavailable.
type blockedError struct{ reason string }

func (e *blockedError) Error() string {
	return "connection blocked by the broker (" + e.reason + "); nothing was sent"
}
func (e *blockedError) Unwrap() []error { return []error{ErrBlocked, ErrUnavailable} }

// PublishError is a publish that failed, with where it was going:
// Exchange, RoutingKey and the cause, Err.
type PublishError = amqpx.PublishError

// DeclareError is a topology declaration the broker refused, most often a
// queue or exchange that exists with other arguments: Kind ("queue",
// "exchange" or "binding"), Name, the Argument that differs (when the
// broker named one) and the cause, Err.
type DeclareError = amqpx.DeclareError
