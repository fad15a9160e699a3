// Package faults is the project's fault suite: it breaks a RabbitMQ node of
// its own (started by scripts/faultnode.sh on 5673, management 15673, TLS
// 5676; never the shared broker on 5672) under the runtime and counts, for
// every message by its own id, whether it was handled, dead-lettered,
// parked, lost or handled twice.
//
// The tests carry the build tag faults, so `go test ./...` does not run
// them; `make faults` starts the node, runs them and stops it. Each prints
// one line a script can read:
//
//	fault=<name> published=N confirmed=N handled=N dlq=N parked=N lost=N duplicated=N recover_ms=N
//
// This file holds what the tests drive the node with: its URLs, rabbitmqctl
// (always with -n acemqfaults@localhost), the management API, memory alarms.
package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Node is the fault suite's own RabbitMQ node (ACEMQ_FAULTNODE_NAME, as
// scripts/faultnode.sh reads it).
var Node = envOr("ACEMQ_FAULTNODE_NAME", "acemqfaults@localhost")

// Its ports (scripts/faultnode.sh; ACEMQ_FAULTNODE_*_PORT).
var (
	AMQPPort = envPort("ACEMQ_FAULTNODE_AMQP_PORT", 5673)
	TLSPort  = envPort("ACEMQ_FAULTNODE_TLS_PORT", 5676)
	MgmtPort = envPort("ACEMQ_FAULTNODE_MGMT_PORT", 15673)
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envPort(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// URL is the node's AMQP URL.
func URL() string { return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", AMQPPort) }

// TLSURL is the node's amqps URL (the listener asks for a client
// certificate).
func TLSURL() string { return fmt.Sprintf("amqps://guest:guest@localhost:%d/", TLSPort) }

// Dir is where the node keeps its files (ACEMQ_FAULTNODE_DIR).
func Dir() string {
	if d := os.Getenv("ACEMQ_FAULTNODE_DIR"); d != "" {
		return d
	}
	return "/tmp/acemq-faultnode"
}

// Require makes sure the node answers. Under -short the test is skipped
// without trying (the broker-free quick test). Otherwise, under CI=true a
// node that does not answer fails the test; elsewhere the test is skipped
// with a hint.
func Require(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the fault node: skipped under -short (the broker-free quick test)")
	}
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", AMQPPort), 3*time.Second)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("the fault node %s does not answer on %d (CI=true: a missing node fails): %v", Node, AMQPPort, err)
		}
		tb.Skipf("the fault node %s does not answer on %d (run `make faults` or scripts/faultnode.sh up): %v", Node, AMQPPort, err)
	}
	c.Close()
	return URL()
}

// Ctl runs rabbitmqctl against the fault node, never the shared one.
// ACEMQ_FAULTNODE_CTL replaces `rabbitmqctl -n <node>` with a command of
// its own (words split on spaces) for a node that runs elsewhere: the 4.3
// node's is `bash scripts/broker43.sh ctl` (run from the repository's
// root: the test gets it as ../../scripts/broker43.sh).
func Ctl(args ...string) (string, error) {
	full := append([]string{"rabbitmqctl", "-n", Node}, args...)
	if c := os.Getenv("ACEMQ_FAULTNODE_CTL"); c != "" {
		full = append(strings.Fields(c), args...)
	}
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Env = append(os.Environ(), "RABBITMQ_CONF_ENV_FILE="+Dir()+"/rabbitmq-env.conf")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("rabbitmqctl -n %s %s: %w: %s", Node, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// MustCtl is Ctl that fails the test.
func MustCtl(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := Ctl(args...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// mgmtClient keeps no idle connections, so that a test's goroutine count
// comes back after it.
var mgmtClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// Mgmt calls the node's management API; v (when not nil) receives the JSON
// answer.
func Mgmt(method, path string, v any) error {
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/api/%s", MgmtPort, path), nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth("guest", "guest")
	resp, err := mgmtClient.Do(req)
	if err != nil {
		return fmt.Errorf("management API of %s: %w", Node, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("management API %s %s: %s", method, path, resp.Status)
	}
	if v == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// WaitListed waits until the management API lists a connection whose
// client named itself clientName (it lists new connections a little late),
// so that a KillConnections after it acts at once.
func WaitListed(tb testing.TB, clientName string, wait time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(wait)
	for {
		var conns []struct {
			ClientProperties struct {
				ConnectionName string `json:"connection_name"`
			} `json:"client_properties"`
		}
		if err := Mgmt(http.MethodGet, "connections?columns=client_properties", &conns); err == nil {
			for _, c := range conns {
				if c.ClientProperties.ConnectionName == clientName {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the management API did not list a connection named %s within %s", clientName, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// KillConnections closes, through the management API, every connection of
// the node whose client named itself clientName (a trailing * matches a
// prefix), and returns how many. The
// API lists a new connection a little late: it waits up to wait for one.
func KillConnections(tb testing.TB, clientName string, wait time.Duration) int {
	tb.Helper()
	deadline := time.Now().Add(wait)
	for {
		var conns []struct {
			Name             string `json:"name"`
			ClientProperties struct {
				ConnectionName string `json:"connection_name"`
			} `json:"client_properties"`
		}
		if err := Mgmt(http.MethodGet, "connections?columns=name,client_properties", &conns); err != nil {
			tb.Fatalf("list connections: %v", err)
		}
		n := 0
		for _, c := range conns {
			name := c.ClientProperties.ConnectionName
			if name != clientName && !(strings.HasSuffix(clientName, "*") && strings.HasPrefix(name, strings.TrimSuffix(clientName, "*"))) {
				continue
			}
			if err := Mgmt(http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil); err == nil {
				n++
			}
		}
		if n > 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MemoryAlarm is whether the node has its memory alarm on.
func MemoryAlarm() (bool, error) {
	var nodes []struct {
		MemAlarm bool `json:"mem_alarm"`
	}
	if err := Mgmt(http.MethodGet, "nodes?columns=mem_alarm", &nodes); err != nil {
		return false, err
	}
	for _, n := range nodes {
		if n.MemAlarm {
			return true, nil
		}
	}
	return false, nil
}

// SetAlarm raises the node's memory alarm (a watermark far below what it
// uses) and waits until the node reports it. The alarm is cleared at the
// end of the test whatever happens.
func SetAlarm(tb testing.TB) {
	tb.Helper()
	tb.Cleanup(func() { ClearAlarm(tb) })
	MustCtl(tb, "set_vm_memory_high_watermark", "absolute", "1")
	waitAlarm(tb, true)
}

// ClearAlarm puts the watermark back and waits until the alarm is gone.
func ClearAlarm(tb testing.TB) {
	tb.Helper()
	MustCtl(tb, "set_vm_memory_high_watermark", "0.4")
	waitAlarm(tb, false)
}

func waitAlarm(tb testing.TB, want bool) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		on, err := MemoryAlarm()
		if err == nil && on == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("the memory alarm of %s did not turn %v within 20s", Node, want)
}

// QueueDepth is how many messages queue holds (ready and unacked).
func QueueDepth(queue string) (int, error) {
	var q struct {
		Messages int `json:"messages"`
	}
	err := Mgmt(http.MethodGet, "queues/%2F/"+url.PathEscape(queue)+"?columns=messages", &q)
	return q.Messages, err
}

// Name returns a unique name with the given prefix.
func Name(prefix string) string {
	return fmt.Sprintf("faults.%s.%d", prefix, time.Now().UnixNano()%1e10)
}
