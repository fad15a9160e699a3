// Command acemq is the operator's command for acemq services: it reads
// dead letters and parked messages without consuming them, replays them,
// compares a manifest's topology with the live broker, and prints retry
// schedules. `acemq --help` lists the subcommands; docs/operations.md is
// the runbook.
package main

import (
	"os"

	"github.com/acemq/acemq-go/cmd/acemq/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
