#!/usr/bin/env bash
# RabbitMQ 4.0 (Debian trixie's rabbitmq-server) as node rmq4@localhost,
# beside the machine's own broker, in a trixie chroot (scripts/rmq4lib.sh):
# AMQP 127.0.0.1:5674, management 127.0.0.1:15674, distribution 25674.
# scripts/broker43.sh runs this script for RabbitMQ 4.3 (Debian sid's) as
# node rmq43@localhost in a sid chroot: AMQP 5677, management 15677,
# distribution 25677 (RMQ_SUITE=sid RMQ_NODE=rmq43).
#   broker4.sh up      build the chroot if missing, start the node, wait
#                      until AMQP and the management API answer (idempotent)
#   broker4.sh down    stop the node (the chroot stays for the next run)
#   broker4.sh status  say whether it runs; rabbitmqctl status
#   broker4.sh ctl ... rabbitmqctl -n rmq4@localhost ... (or rabbitmq-queues …)
#   broker4.sh leftovers   say how many queues the node holds (after a run:
#                      what the tests' cleanups left behind)
#   broker4.sh deprecated  fail when the node saw a deprecated feature used
#                      (a run of the suite must use none: RabbitMQ 4.x
#                      removes them one by one)
set -euo pipefail
. "$(dirname "$0")/rmq4lib.sh"

node=${RMQ_NODE:-rmq4}
node_ports "$node"
case ${1:-up} in
  up)
    t0=$SECONDS
    with_lock
    ensure_root
    if node_running $node; then
      wait_node $node 120
      log "$node@localhost already running: amqp://guest:guest@127.0.0.1:$AMQP/ http://127.0.0.1:$MGMT"
      exit 0
    fi
    start_node $node
    wait_node $node 180
    log "$node@localhost ($(ctl $node version 2>/dev/null || echo '?')) answering in $((SECONDS - t0)) s: amqp://guest:guest@127.0.0.1:$AMQP/ http://127.0.0.1:$MGMT"
    ;;
  down)
    with_lock
    stop_node $node
    any_node_running || umount_proc
    log "$node@localhost stopped"
    ;;
  status)
    if node_running $node; then
      log "$node@localhost running (pid $(node_pid $node))"
      ctl $node status
    else
      log "$node@localhost not running"; exit 3
    fi
    ;;
  ctl) shift; ctl $node "$@" ;;
  deprecated)
    used=$(curl -fsS -u guest:guest http://127.0.0.1:$MGMT/api/deprecated-features/used) ||
      die "the management API of $node@localhost did not answer"
    if [ "$used" != "[]" ]; then die "deprecated features used on $node@localhost: $used"; fi
    log "no deprecated feature used on $node@localhost since it started"
    ;;
  leftovers)
    # Report (not fail on) the queues the suite left on the node: each test
    # deletes its own, so anything here is a cleanup that went wrong.
    json=$(curl -fsS -u guest:guest "http://127.0.0.1:$MGMT/api/queues?columns=name") ||
      die "the management API of $node@localhost did not answer"
    names=$(printf '%s' "$json" | grep -o '"name":"[^"]*"' | cut -d'"' -f4 || true)
    n=$(printf '%s' "$names" | grep -c . || true)
    if [ "$n" -gt 0 ]; then
      log "$n queues left on $node@localhost after the run, e.g. $(printf '%s\n' "$names" | head -5 | tr '\n' ' ')"
    else
      log "no queue left on $node@localhost"
    fi
    ;;
  *) die "usage: $0 up|down|status|deprecated|leftovers|ctl ..." ;;
esac
