package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// cost is what the whole process spent from a run's start (clockStart) to
// its end: CPU time (user and system) and write system calls. Only one
// side runs at a time, so it is that side's cost, the broker's excluded:
// read per message, it does not depend on how loaded the machine is the
// way a throughput does.
type cost struct {
	cpu    time.Duration
	writes int64 // -1 when /proc/self/io cannot be read
}

func processCost() cost {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	c := cost{cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), writes: -1}
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return c
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			c.writes, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return c
}

// clockStart starts a run's timed part: the cost is counted from here.
func (e *env) clockStart() time.Time {
	if e.profile != "" && e.profiling == nil && e.profileErr == nil {
		f, err := os.Create(e.profile)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err == nil {
				e.profiling = f
			} else {
				_ = f.Close()
			}
		}
		e.profileErr = err
	}
	e.costStart = processCost()
	return time.Now()
}

// stopProfile ends the profile clockStart began, if any, and reports
// what writing it failed with.
func (e *env) stopProfile() error {
	err := e.profileErr
	e.profileErr = nil
	if e.profiling != nil {
		pprof.StopCPUProfile()
		err = e.profiling.Close()
		e.profiling = nil
	}
	if err != nil {
		return fmt.Errorf("the A side's profile: %w", err)
	}
	return nil
}

// perMessage is the cost since clockStart, per message of n.
func (e *env) perMessage(n int) (cpuNs, writes float64) {
	now := processCost()
	cpuNs = float64(now.cpu-e.costStart.cpu) / float64(n)
	writes = -1
	if now.writes >= 0 && e.costStart.writes >= 0 {
		writes = float64(now.writes-e.costStart.writes) / float64(n)
	}
	return cpuNs, writes
}

// reportCost prints, per case, the medians of each side's CPU time and
// write system calls per message, and A's CPU over B's.
func reportCost(w io.Writer, results []result) {
	fmt.Fprintf(w, "\nper message, this process (medians): CPU µs and write syscalls of each side\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tbody\tA CPU µs\tB CPU µs\tCPU A/B\tA writes\tB writes\n")
	for _, r := range results {
		a, b := median(r.aCPU), median(r.bCPU)
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.2f\t%.3f\t%.3f\n", r.c.name, r.size, a/1e3, b/1e3, a/b, median(r.aWrites), median(r.bWrites))
	}
	_ = tw.Flush()
}
