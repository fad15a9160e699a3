# acemq-go. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
export ACEMQ_TEST_URL ?= amqp://guest:guest@localhost:5672/

.PHONY: help test check broker fmt-check vet generated-check bench generate golden demo lint

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

test: broker fmt-check vet generated-check ## everything: broker, gofmt, vet, generated code current, every test (with -race)
	$(GO) test -race -count=1 -timeout 12m ./...

broker: ## make sure a RabbitMQ with the management plugin answers at ACEMQ_TEST_URL
	@bash scripts/broker.sh

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' ; git ls-files --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## go vet ./...
	$(GO) vet ./...

generated-check: ## fail when goldens or the examples' generated code are stale
	@if [ -d generator ]; then $(GO) test -count=1 -run 'TestGolden' ./generator/...; fi
	@for m in $$(ls examples/*/acemq.yaml 2>/dev/null); do \
	  d=$$(dirname $$m); (cd $$d && $(GO) run github.com/acemq/acemq-go/cmd/acemq-gen check -f acemq.yaml) || exit 1; \
	done

bench: broker ## benchmarks, each printed as a ratio against its baseline in the same run
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

generate: ## regenerate the examples' code (go generate)
	$(GO) generate ./examples/...

golden: ## rewrite the golden files (review with git diff golden/)
	$(GO) test ./generator/... -run TestGolden -update

demo: broker ## play the orders example against the broker
	$(GO) run ./examples/orders

lint: fmt-check vet ## gofmt and go vet
