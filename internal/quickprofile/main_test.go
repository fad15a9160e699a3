package main

import (
	"strings"
	"testing"
)

// The profile sums each package's Elapsed, orders the packages by it and
// names their slowest top-level tests; subtests and output lines are not
// counted twice.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"a","Test":"TestX"}`,
		`{"Action":"pass","Package":"a","Test":"TestX","Elapsed":2.5}`,
		`{"Action":"pass","Package":"a","Test":"TestX/sub","Elapsed":2.4}`,
		`{"Action":"pass","Package":"a","Test":"TestY","Elapsed":0.5}`,
		`{"Action":"output","Package":"a","Output":"ok a 3.1s\n"}`,
		`{"Action":"pass","Package":"a","Elapsed":3.1}`,
		`# a build error's text`,
		`{"Action":"fail","Package":"b","Test":"TestZ","Elapsed":7}`,
		`{"Action":"fail","Package":"b","Elapsed":7.2}`,
		`{"Action":"skip","Package":"c","Elapsed":0}`,
	}, "\n")
	pkgs, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	report(&out, pkgs, 12)
	want := "   7.2s fail b  TestZ 7.0s\n" +
		"   3.1s pass a  TestX 2.5s, TestY 0.5s\n" +
		"   0.0s skip c  \n" +
		"3 packages (2 with tests, 1 failed); their tests ran 10.3s in all (each binary's run, not its build)\n"
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
}
