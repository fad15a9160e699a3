#!/usr/bin/env bash
# Three RabbitMQ 4.3 nodes clustered on this machine, in the sid chroot of
# scripts/rmq4lib.sh (the one make broker43 uses), beside the machine's
# own broker: rmqc1@localhost, rmqc2@localhost, rmqc3@localhost on
# 127.0.0.1 AMQP 5691-5693, management 15691-15693, distribution
# 25691-25693. On 4.3 Khepri is the only metadata store (Mnesia is gone):
# joining, leaving and a node's restart go through its Raft log. Set
# RMQ_SUITE=trixie to cluster 4.0 nodes instead.
#   cluster.sh up              start the nodes, join rmqc2 and rmqc3 to rmqc1,
#                              check cluster_status (idempotent)
#   cluster.sh down            stop the three nodes and remove their data
#   cluster.sh status          cluster_status as rmqc1 (or the first running) sees it
#   cluster.sh stop-node  N    stop node N (rmqc1|rmqc2|rmqc3): a fault
#   cluster.sh start-node N    start node N again and wait until it answers
#   cluster.sh ctl N ...       rabbitmqctl -n N@localhost ... (or rabbitmq-queues …)
set -euo pipefail
RMQ_SUITE=${RMQ_SUITE:-sid}
. "$(dirname "$0")/rmq4lib.sh"

nodes=(rmqc1 rmqc2 rmqc3)

check_node() {
  case $1 in rmqc1|rmqc2|rmqc3) ;; *) die "not a cluster node: $1 (rmqc1, rmqc2 or rmqc3)" ;; esac
}

# running_nodes N prints the running nodes of the cluster as N sees them.
running_nodes() { json_list "$1" running_nodes; }

# disc_nodes N prints every member N knows (running or not).
disc_nodes() { json_list "$1" disk_nodes; }

# json_list N KEY prints the sorted node names of cluster_status's KEY.
json_list() {
  ctl "$1" cluster_status --formatter json 2>/dev/null |
    grep -o "\"$2\":\[[^]]*\]" | grep -o 'rmqc[0-9]@localhost' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

want="rmqc1@localhost rmqc2@localhost rmqc3@localhost"

case ${1:-up} in
  up)
    t0=$SECONDS
    with_lock
    ensure_root
    for n in "${nodes[@]}"; do start_node "$n"; done
    for n in "${nodes[@]}"; do wait_node "$n" 180; done
    for n in rmqc2 rmqc3; do
      if [[ " $(disc_nodes rmqc1) " == *" $n@localhost "* ]]; then continue; fi
      log "joining $n@localhost to rmqc1@localhost"
      ctl "$n" stop_app >/dev/null
      ctl "$n" reset >/dev/null
      ctl "$n" join_cluster rmqc1@localhost >/dev/null
      ctl "$n" start_app >/dev/null
      wait_node "$n" 120
    done
    for _ in $(seq 1 60); do
      [ "$(running_nodes rmqc1)" = "$want" ] && break
      sleep 1
    done
    got=$(running_nodes rmqc1)
    [ "$got" = "$want" ] || die "cluster_status on rmqc1 lists running nodes [$got], want [$want]"
    log "cluster of 3 ($want) running in $((SECONDS - t0)) s: amqp://guest:guest@127.0.0.1:5691/ …5692/ …5693/, management http://127.0.0.1:15691"
    ;;
  down)
    with_lock
    for n in "${nodes[@]}"; do stop_node "$n"; done
    for n in "${nodes[@]}"; do
      rm -rf --one-file-system "$ROOT/var/lib/rabbitmq/$n" "$ROOT/var/lib/rabbitmq/$n.pid" \
        "$ROOT/var/log/rabbitmq/$n" "$ROOT/etc/rabbitmq/$n.conf" "$ROOT/etc/rabbitmq/$n.plugins"
    done
    any_node_running || umount_proc
    log "cluster stopped and removed"
    ;;
  status)
    for n in "${nodes[@]}"; do
      if node_running "$n"; then ctl "$n" cluster_status; exit 0; fi
    done
    log "no cluster node running"; exit 3
    ;;
  stop-node)
    check_node "${2:-}"
    stop_node "$2"
    log "$2@localhost stopped"
    ;;
  start-node)
    check_node "${2:-}"
    t0=$SECONDS
    start_node "$2"
    wait_node "$2" 180
    log "$2@localhost answering again in $((SECONDS - t0)) s"
    ;;
  ctl)
    check_node "${2:-}"
    n=$2; shift 2
    ctl "$n" "$@"
    ;;
  *) die "usage: $0 up|down|status|stop-node N|start-node N|ctl N ..." ;;
esac
