// Package confluenttest is an in-test HTTP server implementing the part of
// Confluent Schema Registry's REST API that acemq's registry.HTTP (through
// hamba/avro's registry client) uses, with the bodies and error codes of
// Confluent's API reference
// (https://docs.confluent.io/platform/current/schema-registry/develop/api.html).
// No Confluent-compatible server can be installed from the package
// registries this project reaches (none on the Go proxy, npm or Debian), so
// the HTTP registry is tested against this one.
//
// Endpoints:
//
//	POST /subjects/{subject}/versions                 {"schema": "..."} → {"id": N}
//	POST /subjects/{subject}                          {"schema": "..."} → {"subject","id","version","schema"}
//	GET  /schemas/ids/{id}                            → {"schema": "..."}
//	GET  /subjects/{subject}/versions/latest          → {"subject","id","version","schema"}
//	POST /compatibility/subjects/{subject}/versions[/{version}]  → {"is_compatible": bool}
//
// Errors: 40401 subject not found, 40402 version not found, 40403 schema
// not found (HTTP 404); 42201 invalid schema (422); 409 incompatible
// schema; 401 unauthorized; 50001 on a server told to fail (500).
package confluenttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hamba/avro/v2"
)

// ContentType is the registry's media type.
const ContentType = "application/vnd.schemaregistry.v1+json"

// Server is a Confluent-compatible registry on a loopback port.
type Server struct {
	// URL is the base URL (http://127.0.0.1:port).
	URL string

	// Username and Password, when set, are required (basic auth); Token,
	// when set, is required as a bearer token.
	Username, Password, Token string
	// Compatibility is the level POST /subjects/{s}/versions enforces and
	// /compatibility reports against: "NONE" (default), "BACKWARD",
	// "FORWARD" or "FULL" (each against the latest version).
	Compatibility string

	calls   atomic.Int64
	failing atomic.Bool

	mu       sync.Mutex
	schemas  []stored         // id-1 → schema
	byPrint  map[[32]byte]int // fingerprint → id
	subjects map[string][]int // subject → ids, version-1 indexed

	srv  *http.Server
	ln   net.Listener
	addr string
	t    testing.TB
}

type stored struct {
	text   string
	parsed avro.Schema
}

// Start starts a server; it is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatalf("confluenttest: %v", err)
	}
	s.t = t
	t.Cleanup(s.Stop)
	return s
}

// New starts a server outside a test (an Example); Stop it when done.
func New() (*Server, error) {
	s := &Server{byPrint: map[[32]byte]int{}, subjects: map[string][]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.addr = ln.Addr().String()
	s.URL = "http://" + s.addr
	s.serve(ln)
	return s, nil
}

func (s *Server) fatalf(format string, args ...any) {
	if s.t == nil {
		panic(fmt.Sprintf(format, args...))
	}
	s.t.Helper()
	s.t.Fatalf(format, args...)
}

func (s *Server) serve(ln net.Listener) {
	s.ln = ln
	srv := &http.Server{Handler: http.HandlerFunc(s.handle)}
	s.srv = srv
	// srv, not s.srv: a Stop before the goroutine runs (a test that skips
	// right after Start) sets s.srv to nil.
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the listener and every connection: clients then get
// "connection refused".
func (s *Server) Stop() {
	if s.srv != nil {
		_ = s.srv.Close()
		s.srv = nil
	}
}

// Restart listens again on the same address, with the same contents.
func (s *Server) Restart() {
	s.Stop()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.fatalf("confluenttest: listen again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// Fail makes every request answer 500 (error code 50001) until Fail(false).
func (s *Server) Fail(on bool) { s.failing.Store(on) }

// Calls is the number of requests served so far.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Register stores schema under subject directly, as another service would,
// and returns its id.
func (s *Server) Register(subject, schema string) int {
	id, code, msg := s.register(subject, schema)
	if code != 0 {
		s.fatalf("confluenttest: register: %d %s", code, msg)
	}
	return id
}

type apiError struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (s *Server) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	status := code
	if code > 1000 {
		status = code / 100
	}
	s.reply(w, status, apiError{Code: code, Message: msg})
}

func (s *Server) authorized(r *http.Request) bool {
	got := r.Header.Get("Authorization")
	switch {
	case s.Token != "":
		return got == "Bearer "+s.Token
	case s.Username != "" || s.Password != "":
		return got == "Basic "+base64.StdEncoding.EncodeToString([]byte(s.Username+":"+s.Password))
	}
	return true
}

// ServeHTTP serves the API (for a test that wraps it, e.g. in TLS).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handle(w, r) }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	if s.failing.Load() {
		s.fail(w, 50001, "Error in the backend data store")
		return
	}
	if !s.authorized(r) {
		s.fail(w, 401, "Unauthorized")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	for i, p := range parts {
		if u, err := url.PathUnescape(p); err == nil {
			parts[i] = u
		}
	}
	switch {
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids":
		s.getByID(w, parts[2])
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "subjects" && parts[2] == "versions":
		s.postVersion(w, r, parts[1])
	case r.Method == http.MethodPost && len(parts) == 2 && parts[0] == "subjects":
		s.lookup(w, r, parts[1])
	case r.Method == http.MethodGet && len(parts) == 4 && parts[0] == "subjects" && parts[2] == "versions":
		s.getVersion(w, parts[1], parts[3])
	case r.Method == http.MethodPost && (len(parts) == 4 || len(parts) == 5) && parts[0] == "compatibility" && parts[1] == "subjects" && parts[3] == "versions":
		v := "latest"
		if len(parts) == 5 {
			v = parts[4]
		}
		s.compatibility(w, r, parts[2], v)
	default:
		s.fail(w, 404, "HTTP 404 Not Found")
	}
}

func readSchema(r *http.Request) (string, error) {
	var body struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return "", err
	}
	if body.SchemaType != "" && body.SchemaType != "AVRO" {
		return "", fmt.Errorf("schema type %s is not served here", body.SchemaType)
	}
	return body.Schema, nil
}

func parse(text string) (avro.Schema, error) {
	return avro.ParseWithCache(text, "", &avro.SchemaCache{})
}

func (s *Server) getByID(w http.ResponseWriter, raw string) {
	id, err := strconv.Atoi(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || id < 1 || id > len(s.schemas) {
		s.fail(w, 40403, fmt.Sprintf("Schema %s not found", raw))
		return
	}
	s.reply(w, 200, map[string]string{"schema": s.schemas[id-1].text})
}

func (s *Server) postVersion(w http.ResponseWriter, r *http.Request, subject string) {
	text, err := readSchema(r)
	if err != nil {
		s.fail(w, 42201, "Invalid schema: "+err.Error())
		return
	}
	id, code, msg := s.register(subject, text)
	if code != 0 {
		s.fail(w, code, msg)
		return
	}
	s.reply(w, 200, map[string]int{"id": id})
}

func (s *Server) register(subject, text string) (int, int, string) {
	parsed, err := parse(text)
	if err != nil {
		return 0, 42201, "Invalid schema: " + err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fp := parsed.Fingerprint()
	id, known := s.byPrint[fp]
	for _, v := range s.subjects[subject] {
		if v == id && known {
			return id, 0, ""
		}
	}
	if vs := s.subjects[subject]; len(vs) > 0 && !s.compatible(parsed, s.schemas[vs[len(vs)-1]-1].parsed) {
		return 0, 409, "Schema being registered is incompatible with an earlier schema for subject \"" + subject + "\""
	}
	if !known {
		s.schemas = append(s.schemas, stored{text: text, parsed: parsed})
		id = len(s.schemas)
		s.byPrint[fp] = id
	}
	s.subjects[subject] = append(s.subjects[subject], id)
	return id, 0, ""
}

// compatible checks a new schema against an old one at the server's level.
func (s *Server) compatible(newer, older avro.Schema) bool {
	c := avro.NewSchemaCompatibility()
	backward := c.Compatible(newer, older) == nil // newer reads older
	forward := c.Compatible(older, newer) == nil  // older reads newer
	switch s.Compatibility {
	case "BACKWARD":
		return backward
	case "FORWARD":
		return forward
	case "FULL":
		return backward && forward
	}
	return true
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request, subject string) {
	text, err := readSchema(r)
	if err != nil {
		s.fail(w, 42201, "Invalid schema: "+err.Error())
		return
	}
	parsed, err := parse(text)
	if err != nil {
		s.fail(w, 42201, "Invalid schema: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	vs, ok := s.subjects[subject]
	if !ok {
		s.fail(w, 40401, fmt.Sprintf("Subject '%s' not found.", subject))
		return
	}
	id := s.byPrint[parsed.Fingerprint()]
	for i, v := range vs {
		if v == id && id != 0 {
			s.reply(w, 200, map[string]any{"subject": subject, "id": id, "version": i + 1, "schema": s.schemas[id-1].text})
			return
		}
	}
	s.fail(w, 40403, "Schema not found")
}

func (s *Server) version(subject, raw string) (int, int, int, string) {
	vs, ok := s.subjects[subject]
	if !ok {
		return 0, 0, 40401, fmt.Sprintf("Subject '%s' not found.", subject)
	}
	n := len(vs)
	if raw != "latest" && raw != "-1" {
		var err error
		if n, err = strconv.Atoi(raw); err != nil || n < 1 || n > len(vs) {
			return 0, 0, 40402, fmt.Sprintf("Version %s not found.", raw)
		}
	}
	return n, vs[n-1], 0, ""
}

func (s *Server) getVersion(w http.ResponseWriter, subject, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, id, code, msg := s.version(subject, raw)
	if code != 0 {
		s.fail(w, code, msg)
		return
	}
	s.reply(w, 200, map[string]any{"subject": subject, "id": id, "version": v, "schema": s.schemas[id-1].text})
}

func (s *Server) compatibility(w http.ResponseWriter, r *http.Request, subject, raw string) {
	text, err := readSchema(r)
	if err != nil {
		s.fail(w, 42201, "Invalid schema: "+err.Error())
		return
	}
	parsed, err := parse(text)
	if err != nil {
		s.fail(w, 42201, "Invalid schema: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, id, code, msg := s.version(subject, raw)
	if code != 0 {
		s.fail(w, code, msg)
		return
	}
	s.reply(w, 200, map[string]bool{"is_compatible": s.compatible(parsed, s.schemas[id-1].parsed)})
}
