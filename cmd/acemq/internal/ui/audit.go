package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// auditEntry is one line of the audit file: when, who (the token's
// name), what, how many, the result.
type auditEntry struct {
	At     string `json:"at"`
	Who    string `json:"who"`
	Action string `json:"action"`
	What   string `json:"what,omitempty"`
	Count  int    `json:"count,omitempty"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// auditShown is how many entries the page shows (the last ones).
const auditShown = 500

// auditLog appends entries to a file, one JSON object a line, synced
// before the action's answer; it keeps the last auditShown for the page.
type auditLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
	last []auditEntry
	err  error // the last write's failure, shown on the page
}

func openAudit(path string) (*auditLog, error) {
	a := &auditLog{path: path}
	if path == "" {
		return a, nil
	}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e auditEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				a.keep(e)
			}
		}
		f.Close()
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit file: %w", err)
	}
	a.f = f
	return a, nil
}

func (a *auditLog) keep(e auditEntry) {
	a.last = append(a.last, e)
	if len(a.last) > auditShown {
		a.last = a.last[len(a.last)-auditShown:]
	}
}

// write appends e (stamped now) and syncs the file.
func (a *auditLog) write(e auditEntry) {
	e.At = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keep(e)
	if a.f == nil {
		return
	}
	b, _ := json.Marshal(e)
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		a.err = err
		return
	}
	if err := a.f.Sync(); err != nil {
		a.err = err
	}
}

func (a *auditLog) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request) {
	a := s.audit
	a.mu.Lock()
	list := make([]auditEntry, len(a.last))
	for i, e := range a.last {
		list[len(a.last)-1-i] = e // newest first
	}
	errText := ""
	if a.err != nil {
		errText = s.scrub(a.err.Error())
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"file": a.path, "entries": list, "error": errText})
}
