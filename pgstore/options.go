package pgstore

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// DefaultPrefix starts every table's name unless WithPrefix says otherwise.
const DefaultPrefix = "acemq_"

// ErrInvalidPrefix is returned (wrapped) for a table prefix that is not a
// lower-case SQL identifier of at most 40 characters.
var ErrInvalidPrefix = errors.New("pgstore: invalid table prefix")

// Option configures Migrate, SQL and the stores.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithPrefix names the tables <prefix>inbox, <prefix>outbox (default
// "acemq_"). The prefix is a lower-case identifier: letters, digits and
// underscores, not starting with a digit, at most 40 characters (so that
// every table's and index's name stays within PostgreSQL's 63). The
// schema is the connection's search_path.
func WithPrefix(prefix string) Option {
	return optionFunc(func(c *config) { c.prefix = prefix })
}

// WithMeterProvider sets where the stores' metrics go (default
// otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithLogger sets the stores' logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

type config struct {
	prefix        string
	meterProvider metric.MeterProvider
	logger        *slog.Logger
	inbox         inboxConfig
}

var prefixPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

func newConfig(opts []Option) (config, error) {
	c := config{prefix: DefaultPrefix, inbox: defaultInboxConfig()}
	for _, o := range opts {
		o.apply(&c)
	}
	if !prefixPattern.MatchString(c.prefix) {
		return c, fmt.Errorf("%w %q: want a lower-case identifier of at most 40 characters (letters, digits, _)", ErrInvalidPrefix, c.prefix)
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c, c.inbox.validate()
}

// table is the quoted name of the table <prefix><name>.
func (c config) table(name string) string {
	return pgx.Identifier{c.prefix + name}.Sanitize()
}

// positive reports d > 0 as an error naming the option otherwise.
func positive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("pgstore: %s must be positive, not %v", name, d)
	}
	return nil
}
