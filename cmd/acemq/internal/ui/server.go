package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acemq/acemq-go/cmd/acemq/internal/bodies"
	"github.com/acemq/acemq-go/internal/gen/model"
	"github.com/acemq/acemq-go/runtime"
	"github.com/acemq/acemq-go/runtime/wire"
)

//go:embed assets
var assets embed.FS

// Config is what a console runs with.
type Config struct {
	// Conn reads and moves the messages.
	Conn *runtime.Connection
	// Declare declares a durable classic queue (the archive of a discard)
	// when it is missing.
	Declare func(ctx context.Context, queue string) error
	// Manifest is the loaded manifest (File its path): its queues' .dlq
	// and .parked are read, its messages' schemas decode and validate
	// bodies, and its queues are where a replay may send a message.
	Manifest *model.Model
	File     string
	// Queues are more queues to read (a .dlq, a .parked, or a queue whose
	// .dlq and .parked are read), and to allow as replay targets.
	Queues []string
	// Bodies decodes Avro bodies (the manifest's schemas, its registry).
	Bodies *bodies.Decoder
	// Registry gives an edited Avro body its schema id; nil: the
	// process's registry.Fingerprint (ids derived from the schema).
	Registry runtime.SchemaRegistry
	// Tokens are the secrets that allow actions, each with the name the
	// audit log gives its holder; none: the console is read-only.
	Tokens map[string]string
	// AuditFile is where every action is written (JSON lines).
	AuditFile string
	// Topology draws the manifest against the broker; nil: not shown.
	Topology func(ctx context.Context) (TopologyView, error)
	// Scrub removes secrets (the broker's password) from a text.
	Scrub func(string) string
	// Log is where the server says what it does (nil: nothing).
	Log *slog.Logger
	// MaxRows bounds the rows the index keeps (0: DefaultMaxRows).
	MaxRows int
	// Hosts are the host names (name, or name:port) a browser may use to
	// reach the console besides the address it listens on and the
	// loopback names (acemq ui --host): a request for any other Host is
	// refused, against DNS rebinding, wherever the console listens.
	Hosts []string
	// Archive is the discard's default archive queue for source q: "" is
	// q + ".archived" (orders.new.dlq.archived).
	Archive string
}

// DefaultMaxRows is how many messages the index keeps a row of: about
// 250 bytes each, 50 MB at most. Past it the groups count every message
// and the lists show the first rows.
const DefaultMaxRows = 200_000

// Server is a console.
type Server struct {
	cfg     Config
	conn    *runtime.Connection
	mux     *http.ServeMux
	sources []string
	allowed []string
	locks   queueLocks
	auth    *auth
	audit   *auditLog
	jobs    *jobs
	types   map[string]*model.Message // by AMQP type
	log     *slog.Logger

	mu       sync.Mutex
	index    *Index
	stopScan context.CancelFunc
	search   *search
	ctx      context.Context // the server's life
	hosts    map[string]bool
}

// New makes a console; Run starts its first pass.
func New(cfg Config) (*Server, error) {
	if cfg.Conn == nil {
		return nil, errors.New("ui: no connection")
	}
	if cfg.Scrub == nil {
		cfg.Scrub = func(s string) string { return s }
	}
	if cfg.MaxRows <= 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, conn: cfg.Conn, log: log, types: map[string]*model.Message{}, ctx: context.Background()}
	s.sources, s.allowed = sourcesOf(cfg.Manifest, cfg.Queues)
	if len(s.sources) == 0 {
		return nil, errors.New("ui: no queue to read: the manifest declares none and no --queue was given")
	}
	if cfg.Manifest != nil {
		for _, m := range cfg.Manifest.Messages {
			s.types[m.Type] = m
		}
	}
	s.auth = newAuth(cfg.Tokens)
	a, err := openAudit(cfg.AuditFile)
	if err != nil {
		return nil, err
	}
	s.audit = a
	s.jobs = newJobs()
	s.index = newIndex(s.sources, cfg.MaxRows)
	s.index.running = false
	s.routes()
	return s, nil
}

// sourcesOf are the queues to read (each manifest queue's .dlq and
// .parked, then the named ones) and the queues a replay may send to.
func sourcesOf(m *model.Model, named []string) (sources, allowed []string) {
	seen := map[string]bool{}
	addSource := func(q string) {
		if !seen[q] {
			seen[q] = true
			sources = append(sources, q)
		}
	}
	addAllowed := func(q string) {
		for _, a := range allowed {
			if a == q {
				return
			}
		}
		allowed = append(allowed, q)
	}
	if m != nil {
		for _, q := range m.Queues {
			addSource(wire.DeadLetterQueue(q.Name))
			addSource(wire.ParkedQueue(q.Name))
			addAllowed(q.Name)
		}
	}
	for _, q := range named {
		if owner := ownerOf(q); owner != "" {
			addSource(q)
			addAllowed(owner)
			continue
		}
		addSource(wire.DeadLetterQueue(q))
		addSource(wire.ParkedQueue(q))
		addAllowed(q)
	}
	return sources, allowed
}

// ownerOf is the queue a .dlq or .parked belongs to, "" otherwise.
func ownerOf(q string) string {
	if o, kind, ok := wire.Owner(q); ok && kind != wire.Rung {
		return o
	}
	return ""
}

// Close flushes the audit file.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.stopScan != nil {
		s.stopScan()
	}
	s.mu.Unlock()
	s.jobs.cancelAll()
	return s.audit.close()
}

// Run starts the first pass; ctx is the server's life.
func (s *Server) Run(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.rescan()
}

// rescan starts a new pass (stopping one that runs) and returns its index.
func (s *Server) rescan() *Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopScan != nil {
		s.stopScan()
	}
	ctx, cancel := context.WithCancel(s.ctx)
	x := newIndex(s.sources, s.cfg.MaxRows)
	s.index, s.stopScan = x, cancel
	go s.scan(ctx, x)
	return x
}

// Index is the current pass's index.
func (s *Server) Index() *Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

func (s *Server) scrub(text string) string { return s.cfg.Scrub(text) }

// Handler is the console's HTTP handler.
func (s *Server) Handler() http.Handler { return s.guard(s.mux) }

// Serve serves the console on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.hosts = map[string]bool{}
	s.listenHosts(ln.Addr().String())
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServer(http.FS(static))
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("GET /api/session", s.handleSession)
	mux.HandleFunc("POST /api/login", s.handleLogin)
	mux.HandleFunc("POST /api/logout", s.handleLogout)
	mux.HandleFunc("GET /api/groups", s.handleGroups)
	mux.HandleFunc("GET /api/messages", s.handleMessages)
	mux.HandleFunc("POST /api/rescan", s.handleRescan)
	mux.HandleFunc("POST /api/search", s.handleSearch)
	mux.HandleFunc("GET /api/search", s.handleSearchState)
	mux.HandleFunc("GET /api/message", s.handleMessage)
	mux.HandleFunc("GET /api/message/raw", s.handleRaw)
	mux.HandleFunc("POST /api/dryrun", s.handleDryRun)
	mux.HandleFunc("POST /api/replay", s.action(s.handleReplay))
	mux.HandleFunc("POST /api/discard", s.action(s.handleDiscard))
	mux.HandleFunc("POST /api/edit", s.action(s.handleEdit))
	mux.HandleFunc("GET /api/jobs", s.handleJobs)
	mux.HandleFunc("POST /api/jobs/{id}/cancel", s.action(s.handleCancel))
	mux.HandleFunc("GET /api/audit", s.handleAudit)
	mux.HandleFunc("GET /api/topology", s.handleTopology)
	s.mux = mux
}

// guard sets the security headers on every answer, serves only the hosts
// it listens as (DNS rebinding), asks POSTs for the console's own header
// (a form on another site cannot send it), and turns a panic into a 500
// with its stack in the log.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r.Host) {
			s.refused(r, "the request's Host "+strconv.Quote(r.Host)+" is not the console's (DNS rebinding?)")
			http.Error(w, "acemq ui: unknown host "+strconv.Quote(r.Host)+" (the console answers to the address it listens on)", http.StatusMisdirectedRequest)
			return
		}
		// A browser says where a request comes from: a page of another
		// site may not make the console read (a look browses a queue) or
		// act, even blind; a link to the page itself is fine.
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" && strings.HasPrefix(r.URL.Path, "/api/") {
			s.refused(r, "the request comes from another site (Sec-Fetch-Site: "+site+")")
			writeError(w, http.StatusForbidden, "the request comes from another site (Sec-Fetch-Site: "+site+")")
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("X-Acemq") != "1" {
			s.refused(r, "no X-Acemq: 1 header (a form on another site?)")
			writeError(w, http.StatusForbidden, "a console request carries the X-Acemq: 1 header")
			return
		}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("ui: panic", "value", fmt.Sprint(v), "stack", string(debug.Stack()))
				writeError(w, http.StatusInternalServerError, "internal error (the stack is in the console's log)")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// listenHosts adds the Host headers a console listening on addr answers:
// addr's host, the loopback names and Config.Hosts' names, with addr's
// port and without; a Config.Hosts entry with a port of its own (a proxy
// in front) as it is.
func (s *Server) listenHosts(addr string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	names := []string{host, "127.0.0.1", "localhost", "[::1]", "::1"}
	for _, h := range s.cfg.Hosts {
		h = strings.ToLower(h)
		if _, _, err := net.SplitHostPort(h); err == nil {
			s.hosts[h] = true
			continue
		}
		names = append(names, h)
	}
	for _, h := range names {
		s.hosts[h] = true
		s.hosts[net.JoinHostPort(strings.Trim(h, "[]"), port)] = true
	}
}

// hostAllowed says whether the console answers a request for host: the
// address it listens on, the loopback names and Config.Hosts; before
// Serve (a handler mounted elsewhere), the loopback names and
// Config.Hosts' on any port.
func (s *Server) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if s.hosts != nil {
		return s.hosts[host]
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	switch name = strings.Trim(name, "[]"); name {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	for _, h := range s.cfg.Hosts {
		if hn, _, err := net.SplitHostPort(h); err == nil {
			h = hn
		}
		if strings.EqualFold(strings.Trim(h, "[]"), name) {
			return true
		}
	}
	return false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// fail answers err, scrubbed.
func (s *Server) fail(w http.ResponseWriter, status int, err error) {
	writeError(w, status, s.scrub(err.Error()))
}

func readJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 4<<20))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the request's JSON: %w", err)
	}
	return nil
}

func intParam(r *http.Request, name string, def int) int {
	if v, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func filterOf(r *http.Request) Filter {
	q := r.URL.Query()
	return Filter{Queue: q.Get("queue"), Type: q.Get("type"), Origin: q.Get("origin"), By: q.Get("by"), Group: q.Get("group")}
}

func (s *Server) handleGroups(w http.ResponseWriter, r *http.Request) {
	by, ok := dimOf(r.URL.Query().Get("by"))
	if !ok {
		by = ByReason
	}
	f := filterOf(r)
	f.Group = ""
	groups, all, pass := s.Index().Groups(by, f, r.URL.Query().Get("q"), intParam(r, "limit", 200))
	writeJSON(w, http.StatusOK, map[string]any{"by": dimNames[by], "groups": groups, "groups_total": all, "pass": pass})
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r)
	if err := f.validate(); err != nil {
		s.fail(w, http.StatusBadRequest, err)
		return
	}
	rows, n := s.Index().Messages(f, intParam(r, "offset", 0), min(intParam(r, "limit", 50), 500))
	writeJSON(w, http.StatusOK, map[string]any{"messages": rows, "total": n})
}

func (s *Server) handleRescan(w http.ResponseWriter, r *http.Request) {
	x := s.rescan()
	x.mu.RLock()
	defer x.mu.RUnlock()
	writeJSON(w, http.StatusAccepted, map[string]any{"pass": x.pass()})
}

// queueLocks let one thing at a time read or change a queue: a look holds
// what it read, so a second look (or a replay) meanwhile would not see it.
type queueLocks struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (l *queueLocks) lock(ctx context.Context, q string) (func(), error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]chan struct{}{}
	}
	ch := l.m[q]
	if ch == nil {
		ch = make(chan struct{}, 1)
		l.m[q] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for %s (another look or action holds it): %w", q, ctx.Err())
	}
}
