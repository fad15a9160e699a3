# acemq-go. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
export ACEMQ_TEST_URL ?= amqp://guest:guest@localhost:5672/
# The modules (go.work ties them together): the generator (the root), the
# runtime, the operator command, the examples, the PostgreSQL store
# (pgstore) and the Redis one (redisstore); bench/ is a module too, tested on its own below. PKGS names
# every package of the others.
MODULES := . runtime drain cmd/acemq examples pgstore redisstore bench
PKGS := ./... ./runtime/... ./drain/... ./cmd/acemq/... ./examples/... ./pgstore/... ./redisstore/...
# The broker lanes after the first (RabbitMQ 4.0, 4.3) run the packages
# whose tests talk to a broker: the generator's stages, acemq-gen and the
# install steps never do, and give the same result on every broker (make
# test runs them once, on 3.10).
BROKERLESS := /cmd/acemq-gen|/generator|/internal/installtest|/internal/crosscheck|/internal/gen/(compat|emit|input|manifest|model|names|oneline|pipeline|schema|gentest|export/templates)
BROKER_PKGS = $(shell $(GO) list ./... | grep -vE 'acemq-go($(BROKERLESS))$$') ./runtime/... ./drain/... ./cmd/acemq/... ./examples/... ./pgstore/... ./redisstore/...

.PHONY: help test quick quick-profile mod-check check broker stores crosscheck broker4 broker4-down test-rmq4 broker43 broker43-down test-rmq43 fmt-check vet generated-check bench fuzz generate golden demo lint tools

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

test: broker stores crosscheck tools fmt-check vet mod-check generated-check ## everything: broker, PostgreSQL and Redis, npm packages, Graphviz, gofmt, vet, go.mod files tidy, generated code current, every test (with -race)
	$(GO) test -race -count=1 -timeout 12m $(PKGS)
	cd bench && $(GO) test -count=1 ./...
	$(MAKE) --no-print-directory bench-smoke

quick: ## the broker-free quick test: go test -short over every module; needs nothing but Go (no broker, npm, Graphviz or promtool), even under CI=true (docs/development.md)
	$(GO) test -short $(PKGS) ./bench/...

quick-profile: ## make quick with go test -json, then where its time went: each package's test time and its slowest tests (internal/quickprofile; docs/development.md, Figures)
	@$(GO) test -short -json $(PKGS) ./bench/... > .quick.json; status=$$?; $(GO) run ./internal/quickprofile < .quick.json; rm -f .quick.json; exit $$status

tools: ## Graphviz (apt, as root) and the AsyncAPI npm packages (npm ci) that internal/gen/export's tests use; Debian's chromium (apt, as root) for acemq ui's browser test; promtool (Debian's prometheus package, unpacked into .tools/bin) for internal/alertcheck
	@bash scripts/artifact-tools.sh
	@bash scripts/promtool.sh

broker: ## make sure a RabbitMQ with the management plugin answers at ACEMQ_TEST_URL
	@bash scripts/broker.sh

stores: ## make sure PostgreSQL (127.0.0.1:5432, database test) and Redis (127.0.0.1:6379) answer, starting them when down (scripts/stores.sh)
	@bash scripts/stores.sh

crosscheck: ## install avsc and ajv (the corpus tests' second implementations) into internal/crosscheck (npm ci)
	@bash scripts/crosscheck.sh

broker4: ## RabbitMQ 4.0 beside the machine's broker: node rmq4@localhost, 127.0.0.1:5674, management :15674, rabbitmq_prometheus :15694 (trixie chroot in /var/cache/acemq; root)
	@bash scripts/broker4.sh up

broker4-down: ## stop the RabbitMQ 4.0 node (the chroot stays for the next run)
	@bash scripts/broker4.sh down

RMQ4_ENV := ACEMQ_TEST_URL=amqp://guest:guest@127.0.0.1:5674/ ACEMQ_TEST_MGMT_URL=http://127.0.0.1:15674 ACEMQ_TEST_PROMETHEUS_URL=http://127.0.0.1:15694

# The fault suite's poison test (a message that kills its consumer
# process: SIGKILL of a child test process, never of a broker) against a
# node given by port, for the 4.x lanes.
POISON = $(GO) test -tags faults -count=1 -timeout 5m -run '^TestPoisonMessageIsParked$$' ./internal/faults/

# The 4.0 lane runs without the race detector: the 3.10 and 4.3 lanes run
# the same packages under it, and what this lane adds is the broker's
# behaviour (measured: 221 s without it against 223 s with it: the lane
# waits on the broker, so this trims little).
test-rmq4: broker4 ## every test that talks to a broker against RabbitMQ 4.0 (make broker4; without -race: the 3.10 and 4.3 lanes run it; -parallel 8: its tests wait on the broker) and the fault suite's poison test, then: no deprecated feature used
	$(RMQ4_ENV) $(GO) test -count=1 -parallel 8 -timeout 12m $(BROKER_PKGS)
	ACEMQ_FAULTNODE_AMQP_PORT=5674 ACEMQ_FAULTNODE_MGMT_PORT=15674 $(POISON)
	@bash scripts/broker4.sh deprecated
	@bash scripts/broker4.sh leftovers

broker43: ## RabbitMQ 4.3 beside the others: node rmq43@localhost, 127.0.0.1:5677, management :15677, rabbitmq_prometheus :15697 (sid chroot in /var/cache/acemq; root)
	@bash scripts/broker43.sh up

broker43-down: ## stop the RabbitMQ 4.3 node (the chroot stays for the next run)
	@bash scripts/broker43.sh down

RMQ43_ENV := ACEMQ_TEST_URL=amqp://guest:guest@127.0.0.1:5677/ ACEMQ_TEST_MGMT_URL=http://127.0.0.1:15677 ACEMQ_TEST_PROMETHEUS_URL=http://127.0.0.1:15697

test-rmq43: broker43 ## every test that talks to a broker (with -race), bench/'s and the fault suite's poison test against RabbitMQ 4.3 (make broker43), then: no deprecated feature used
	$(RMQ43_ENV) $(GO) test -race -count=1 -timeout 12m $(BROKER_PKGS)
	ACEMQ_FAULTNODE_AMQP_PORT=5677 ACEMQ_FAULTNODE_MGMT_PORT=15677 $(POISON)
	cd bench && $(RMQ43_ENV) $(GO) test -count=1 ./...
	@bash scripts/broker43.sh deprecated
	@bash scripts/broker43.sh leftovers

cluster: ## three clustered RabbitMQ 4.3 nodes rmqc1..3@localhost (Khepri), 127.0.0.1:5691-5693, management :15691-15693 (the sid chroot of make broker43; root)
	@bash scripts/cluster.sh up

cluster-down: ## stop the three cluster nodes and remove their data
	@bash scripts/cluster.sh down

test-cluster: cluster ## the cluster tests (build tag cluster): leader stopped, rolling restart, quorum delay levels with a node stopped; one fault= line each; bounded
	$(GO) vet -tags cluster ./internal/clustertest/
	$(GO) test -tags cluster -race -count=1 -timeout 15m -v -run 'TestLeaderStopped|TestRollingRestart|TestDelayNodeStopped' ./internal/clustertest/ 2>&1 | grep -v '^20[0-9][0-9]/' ; test $${PIPESTATUS[0]} -eq 0

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' ; git ls-files --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## go vet over every module
	$(GO) vet $(PKGS) ./bench/...

mod-check: ## fail when a module's go.mod or go.sum is not tidy (each module alone, as a user builds it)
	@for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) mod tidy -diff) || { echo "go.mod of $$m is not tidy: run (cd $$m && GOWORK=off go mod tidy)"; exit 1; }; done

generated-check: ## fail when goldens, the examples' generated code or docs/corpus.md are stale
	@if [ -d generator ]; then $(GO) test -count=1 -run 'TestGolden' ./generator/... ./internal/gen/...; fi
	@$(GO) run ./cmd/acemq-gen check -f bench/orders/acemq.yaml
	@$(GO) run ./cmd/acemq-gen check -f pgstore/internal/inboxgen/acemq.yaml
	@$(GO) run ./cmd/acemq-gen check -f pgstore/internal/prefixgen/acemq.yaml
	@$(GO) run ./cmd/acemq-gen check -f runtime/testdata/avroevolve/paymentsv1/acemq.yaml
	@$(GO) run ./cmd/acemq-gen check -f runtime/testdata/avroevolve/paymentsv2/acemq.yaml
	@for m in $$(ls examples/*/acemq.yaml 2>/dev/null); do \
	  d=$$(dirname $$m); (cd $$d && $(GO) tool acemq-gen check -f acemq.yaml) || exit 1; \
	done

FUZZTIME ?= 1m
fuzz: ## run every fuzz target of the repository (each func Fuzz* found by scripts/fuzz.sh: codecs, headers, the fast parse, the generated encoders and matchers, the manifest, schema and generator) for FUZZTIME (1m); their seeds run in make test
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

bench-smoke: ## run every go test benchmark of every module once (-benchtime 1x), so none breaks unseen; acemqbench's cases are smoke-run by bench/'s TestEveryCaseRuns
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x $(PKGS) ./bench/...

BENCHFLAGS ?= --n 5000 --pairs 5 --body both
bench: broker ## the go test benchmarks, then bench/'s side-by-side program (BENCHFLAGS; docs/performance.md); every figure a ratio to a baseline in the same run
	$(GO) test -run '^$$' -bench . -benchmem -count=1 $(PKGS)
	cd bench && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd bench && $(GO) run ./cmd/acemqbench --url "$(ACEMQ_TEST_URL)" $(BENCHFLAGS)

generate: ## regenerate the examples' code (go generate)
	$(GO) generate ./examples/...
	$(GO) generate ./runtime/testdata/avroevolve/paymentsv1 ./runtime/testdata/avroevolve/paymentsv2

golden: ## rewrite the golden files (review with git diff golden/)
	$(GO) test ./generator ./internal/gen/export -run TestGolden -update

demo: broker ## play the orders example against the broker
	$(GO) run ./examples/orders

lint: fmt-check vet ## gofmt and go vet

.PHONY: faults faultnode faultnode-down
# One fault run per node at a time: the suite alarms, stops and closes the
# connections of its node, and its last step stops the node, so a second
# run on the same node (two checkouts on one machine) waits for the first.
# ACEMQ_FAULTNODE_NAME and the ACEMQ_FAULTNODE_*_PORT variables give a
# checkout a node of its own instead (scripts/faultnode.sh).
FAULTLOCK = /tmp/acemq-faults-$(or $(ACEMQ_FAULTNODE_NAME),acemqfaults@localhost).lock

faults: ## the fault suite on a RabbitMQ node of its own (5673; never the shared one), started and stopped here, then pgstore's (the relay and the inbox consumer SIGKILLed); one line per fault
	@exec 9>"$(FAULTLOCK)"; flock -n 9 || { echo "faults: another fault run holds $(FAULTLOCK); waiting"; flock 9; }; \
	bash scripts/faultnode.sh up 9>&- || exit 1; \
	log=$$(mktemp); trap 'bash scripts/faultnode.sh down 9>&-; rm -f "$$log"' EXIT; \
	set -o pipefail; \
	$(GO) test -tags faults -count=1 -timeout 15m -v ./internal/faults/ 9>&- 2>&1 | tee "$$log" | grep -E '^(--- |FAIL|ok|panic|    |  [a-z0-9-]+: )' ; rc=$$?; \
	ACEMQ_TEST_URL=amqp://guest:guest@127.0.0.1:$${ACEMQ_FAULTNODE_AMQP_PORT:-5673}/ ACEMQ_TEST_MGMT_URL=http://127.0.0.1:$${ACEMQ_FAULTNODE_MGMT_PORT:-15673} \
	$(GO) test -tags faults -count=1 -timeout 10m -v -run '^TestFault' ./pgstore/ 9>&- 2>&1 | tee -a "$$log" | grep -E '^(--- |FAIL|ok|panic|    |  [a-z0-9-]+: )' || rc=1; \
	echo "# make faults: the fault table"; grep -h '^fault=' "$$log"; exit $$rc

faultnode: ## start the fault suite's own node (acemqfaults@localhost on 5673) and leave it running
	@bash scripts/faultnode.sh up

faultnode-down: ## stop the fault suite's own node
	@bash scripts/faultnode.sh down
