package generator

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var (
	typeFunc  = regexp.MustCompile(`(?m)^func (TypeOf\w+)\(\)`)
	roundTrip = regexp.MustCompile(`goldentest\.RoundTrip\(t, \w+\.(TypeOf\w+)\(\)`)
)

// Every message type of every golden case that generates has a broker-free
// codec round trip (internal/goldentest.RoundTrip) in its want/ tests, so
// that go test without a broker still exercises each one.
func TestEveryGoldenMessageRoundTrips(t *testing.T) {
	manifests, err := filepath.Glob("../golden/*/acemq.yaml")
	if err != nil || len(manifests) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	checked := 0
	for _, m := range manifests {
		want := filepath.Join(filepath.Dir(m), "want")
		msgs, err := os.ReadFile(filepath.Join(want, "messages.acemq.go"))
		if err != nil {
			continue // a case that must fail: want/error.txt
		}
		tested := map[string]bool{}
		tests, _ := filepath.Glob(filepath.Join(want, "*_test.go"))
		for _, f := range tests {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range roundTrip.FindAllSubmatch(src, -1) {
				tested[string(c[1])] = true
			}
		}
		for _, c := range typeFunc.FindAllSubmatch(msgs, -1) {
			checked++
			if !tested[string(c[1])] {
				t.Errorf("%s: %s has no goldentest.RoundTrip in want/*_test.go", filepath.Base(filepath.Dir(m)), c[1])
			}
		}
	}
	if checked < 8 {
		t.Errorf("checked %d message types; the glob found too few", checked)
	}
}
