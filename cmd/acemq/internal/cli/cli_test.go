package cli

import (
	"github.com/acemq/acemq-go/runtime/wire"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestQueueNames(t *testing.T) {
	for in, want := range map[string][2]string{
		"orders.new":        {"orders.new.dlq", "orders.new.parked"},
		"orders.new.dlq":    {"orders.new.dlq", "orders.new.parked"},
		"orders.new.parked": {"orders.new.dlq", "orders.new.parked"},
	} {
		if got := queueName(in, wire.DeadLetterQueue); got != want[0] {
			t.Errorf("dlq %s: %s, want %s", in, got, want[0])
		}
		if got := queueName(in, wire.ParkedQueue); got != want[1] {
			t.Errorf("parked %s: %s, want %s", in, got, want[1])
		}
	}
	for in, want := range map[string]string{"orders.new": "orders.new.dlq", "orders.new.dlq": "orders.new.dlq", "orders.new.parked": "orders.new.parked"} {
		if got := replaySource(in); got != want {
			t.Errorf("replay %s reads %s, want %s", in, got, want)
		}
	}
}

func TestDerivedManagement(t *testing.T) {
	for in, want := range map[string]string{
		"amqp://guest:guest@localhost:5672/":  "http://localhost:15672",
		"amqp://rabbit.internal/orders":       "http://rabbit.internal:15672",
		"amqps://u:p@rabbit.internal/":        "https://rabbit.internal:15671",
		"amqp://guest:guest@127.0.0.1:5674/":  "http://127.0.0.1:15674",
		"amqp://guest:guest@127.0.0.1:60000/": "http://127.0.0.1:15672",
	} {
		u, _ := url.Parse(in)
		if got := derivedManagement(u); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// Whatever is written, a password of a URL given never shows; a user name
// equal to the password stays readable.
func TestScrubber(t *testing.T) {
	var b strings.Builder
	s := scrubber{&b, passwords([]string{"--url", "amqp://ops:s3cr%40t@h:5672/", "--mgmt-url=http://guest:guest@h:15672"})}
	_, _ = s.Write([]byte("dial amqp://ops:s3cr%40t@h:5672/: s3cr@t refused; http://guest:guest@h:15672 guest"))
	got := b.String()
	if strings.Contains(got, "s3cr") || !strings.Contains(got, "http://guest:xxxxx@h:15672 guest") {
		t.Errorf("scrubbed: %s", got)
	}
	if r := redact("amqp://u:pw@[bad"); r != "amqp://u:xxxxx@[bad" {
		t.Errorf("redact: %s", r)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 9 * time.Second: "9s", 3*time.Minute + 10*time.Second: "3m",
		26 * time.Hour: "26h0m", 72 * time.Hour: "3d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%s) = %s, want %s", d, got, want)
		}
	}
}

// With the management plugin off, `acemq topology diff` and `acemq drain`
// name the plugin and the command that enables it (exit 1), not only
// "connection refused" on its port.
func TestManagementPluginOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mgmt := "http://" + ln.Addr().String()
	ln.Close()
	manifest := filepath.Join(t.TempDir(), "acemq.yaml")
	if err := os.WriteFile(manifest, []byte("version: 1\npackage: orders\nqueues:\n  orders.new: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"topology", "diff", "-f", manifest},
		{"drain", "orders.new"},
	} {
		var stdout, stderr strings.Builder
		args = append(args, "--mgmt-url", mgmt, "--url", "amqp://guest:guest@127.0.0.1:5672/")
		code := Main(args, &stdout, &stderr)
		if code != ExitFail {
			t.Errorf("acemq %s: exit %d, want %d (stderr %s)", strings.Join(args, " "), code, ExitFail, stderr.String())
		}
		for _, want := range []string{"rabbitmq_management", "rabbitmq-plugins enable rabbitmq_management", "--mgmt-url", "connection refused"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("acemq %s: stderr %q, want it to name %q", args[0], stderr.String(), want)
			}
		}
	}
}

// acemq ui refuses, before it reads anything, a listen address beyond
// loopback without --allow-remote, a wildcard address without a --host
// (it would answer to any Host: DNS rebinding) and a --host that is not
// a host name.
func TestUIListenRules(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:8080"}, "add --allow-remote"},
		{[]string{"--listen", "0.0.0.0:8080", "--allow-remote"}, "name the host browsers use to reach the console with --host"},
		{[]string{"--listen", "[::]:8080", "--allow-remote"}, "with --host"},
		{[]string{"--listen", ":8080", "--allow-remote"}, "with --host"},
		{[]string{"--listen", "0.0.0.0:8080", "--allow-remote", "--host", "http://console.internal/"}, `--host "http://console.internal/": want a host name`},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"ui", "-f", "acemq.yaml"}, c.args...)
		if code := Main(args, &stdout, &stderr); code != ExitBad || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("acemq %s: exit %d, stderr %q; want exit %d naming %q", strings.Join(args, " "), code, stderr.String(), ExitBad, c.want)
		}
	}
}
