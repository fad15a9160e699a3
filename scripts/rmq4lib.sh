# shellcheck shell=bash
# Shared by scripts/broker4.sh, scripts/broker43.sh and scripts/cluster.sh:
# RabbitMQ 4.x from Debian, run in a minimal Debian chroot beside the
# machine's own RabbitMQ (bookworm's glibc cannot run trixie's Erlang 27 or
# sid's Erlang 29). The sourcing script picks the chroot with RMQ_SUITE:
#   trixie (default)  RabbitMQ 4.0, Debian stable's
#                     (ACEMQ_TRIXIE_ROOT, default /var/cache/acemq/trixie)
#   sid               RabbitMQ 4.3, Debian unstable's
#                     (ACEMQ_SID_ROOT, default /var/cache/acemq/sid)
# bookworm's debootstrap has no script for forky (testing), so 4.3 comes
# from sid; the snapshot mirror's sid Release files carry a Valid-Until in
# the past, so apt in that chroot runs with Acquire::Check-Valid-Until=false.
#
# A chroot lives outside the repository and survives between runs, rebuilt
# when its marker is missing or stale. Building it needs root, debootstrap
# (installed through apt when missing) and deb.debian.org; trixie's takes
# ~40 s and ~330 MB.
# Nodes in it never touch the machine's broker: their own node names,
# ports bound to 127.0.0.1, their own Erlang cookie (so a CLI call that
# named the wrong node could not authenticate anyway), and every
# rabbitmqctl call names its node with -n. epmd on 4369 is the machine's
# (shared, which is fine: each node registers its own name).

RMQ_SUITE=${RMQ_SUITE:-trixie}
case $RMQ_SUITE in
  trixie)
    ROOT=${ACEMQ_TRIXIE_ROOT:-/var/cache/acemq/trixie}
    MIRROR=${ACEMQ_TRIXIE_MIRROR:-http://deb.debian.org/debian}
    APT_OPTS=()
    ;;
  sid)
    ROOT=${ACEMQ_SID_ROOT:-/var/cache/acemq/sid}
    MIRROR=${ACEMQ_SID_MIRROR:-http://deb.debian.org/debian}
    APT_OPTS=(-o Acquire::Check-Valid-Until=false)
    ;;
  *) echo "rmq4: unknown RMQ_SUITE $RMQ_SUITE (trixie or sid)" >&2; exit 1 ;;
esac
# The package's own rabbitmq user would get uid 101, which is postgres's on
# these machines: a process of the chroot would then be postgres to the
# kernel. The user is created first with a uid nobody uses.
RMQ_UID=${ACEMQ_RMQ4_UID:-46740}
RECIPE=v1 # bump when the chroot recipe changes: a stale chroot is rebuilt
LOCK=${ROOT%/*}/.acemq-$RMQ_SUITE.lock
export RABBITMQ_CTL_DIST_PORT_MIN=35700 RABBITMQ_CTL_DIST_PORT_MAX=35799

log() { echo "rmq4: $*" >&2; }
die() { log "$*"; exit 1; }

# in_root runs a command in the chroot as root with a clean environment.
in_root() {
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# rabbit_cmd NODE CMD... sets RCMD to CMD run in the chroot as the
# rabbitmq user, with the RabbitMQ environment of NODE (see node_env) and
# the CLI's own distribution port range.
rabbit_cmd() {
  local node=$1; shift
  node_env "$node"
  RCMD=(chroot --userspec="$RMQ_UID:$RMQ_UID" "$ROOT" /usr/bin/env -i
    PATH=/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/bin HOME=/var/lib/rabbitmq LANG=C.UTF-8
    RABBITMQ_CTL_DIST_PORT_MIN=35700 RABBITMQ_CTL_DIST_PORT_MAX=35799
    ERL_EPMD_ADDRESS=127.0.0.1
    "${NODE_ENV[@]}" "$@")
}

as_rabbit() { rabbit_cmd "$@"; "${RCMD[@]}"; }

# ctl runs rabbitmqctl (or another CLI tool given as $2) against node $1,
# always naming it.
ctl() {
  local node=$1; shift
  local tool=rabbitmqctl
  case ${1:-} in rabbitmq-queues|rabbitmq-diagnostics|rabbitmq-plugins|rabbitmq-upgrade) tool=$1; shift ;; esac
  as_rabbit "$node" "$tool" -n "$node@localhost" "$@"
}

# node_ports NAME sets AMQP, MGMT and DIST for a node name.
node_ports() {
  case $1 in
    rmq4) AMQP=5674 MGMT=15674 DIST=25674 ;;
    rmq43) AMQP=5677 MGMT=15677 DIST=25677 ;;
    rmqc1) AMQP=5691 MGMT=15691 DIST=25691 ;;
    rmqc2) AMQP=5692 MGMT=15692 DIST=25692 ;;
    rmqc3) AMQP=5693 MGMT=15693 DIST=25693 ;;
    *) die "unknown node $1" ;;
  esac
}

# node_env NAME sets NODE_ENV, the RabbitMQ environment of a node: each
# node of the chroot has its own name, ports, config, data and logs.
node_env() {
  local n=$1
  node_ports "$n"
  NODE_ENV=(RABBITMQ_NODENAME="$n@localhost"
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$AMQP" RABBITMQ_DIST_PORT="$DIST"
    RABBITMQ_CONFIG_FILE="/etc/rabbitmq/$n.conf"
    RABBITMQ_ENABLED_PLUGINS_FILE="/etc/rabbitmq/$n.plugins"
    RABBITMQ_MNESIA_BASE="/var/lib/rabbitmq/$n" RABBITMQ_LOG_BASE="/var/log/rabbitmq/$n"
    RABBITMQ_PID_FILE="/var/lib/rabbitmq/$n.pid"
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}")
}

# ensure_root builds the chroot when its marker is missing or stale.
ensure_root() {
  [ "$(cat "$ROOT/.acemq-ready" 2>/dev/null)" = "$RECIPE" ] && return 0
  [ "$(id -u)" = 0 ] || die "building the trixie chroot needs root (sudo make broker4)"
  if getent passwd "$RMQ_UID" >/dev/null || getent group "$RMQ_UID" >/dev/null; then
    die "uid/gid $RMQ_UID is taken on this machine; set ACEMQ_RMQ4_UID to an unused one"
  fi
  local t0=$SECONDS
  if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq debootstrap >/dev/null ||
      { apt-get -o DPkg::Lock::Timeout=300 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq debootstrap >/dev/null; }
  fi
  log "building a minimal Debian $RMQ_SUITE in $ROOT (once; trixie ~40 s, sid a few minutes)"
  umount_proc
  rm -rf --one-file-system "$ROOT"
  mkdir -p "$ROOT"
  debootstrap --variant=minbase "$RMQ_SUITE" "$ROOT" "$MIRROR" >"$ROOT.debootstrap.log" 2>&1 ||
    { tail -20 "$ROOT.debootstrap.log" >&2; die "debootstrap failed (log: $ROOT.debootstrap.log)"; }
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n' >"$ROOT/etc/hosts"
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  in_root groupadd -g "$RMQ_UID" rabbitmq
  in_root useradd -u "$RMQ_UID" -g "$RMQ_UID" -d /var/lib/rabbitmq -s /usr/sbin/nologin -M rabbitmq
  mount_proc
  # debootstrap's own sources.list; with the snapshot mirror sid needs the
  # Valid-Until check off (APT_OPTS) for the update and the install.
  if [ ${#APT_OPTS[@]} -gt 0 ]; then
    in_root apt-get "${APT_OPTS[@]}" update -qq >"$ROOT.apt.log" 2>&1 ||
      { tail -20 "$ROOT.apt.log" >&2; die "apt-get update in the chroot failed (log: $ROOT.apt.log)"; }
  fi
  in_root apt-get "${APT_OPTS[@]}" install -y -qq --no-install-recommends rabbitmq-server >>"$ROOT.apt.log" 2>&1 ||
    { tail -20 "$ROOT.apt.log" >&2; die "apt-get install rabbitmq-server in the chroot failed (log: $ROOT.apt.log)"; }
  in_root apt-get clean
  [ "$(in_root id -u rabbitmq)" = "$RMQ_UID" ] || die "the chroot's rabbitmq user is not uid $RMQ_UID"
  mkdir -p "$ROOT/var/lib/rabbitmq" "$ROOT/var/log/rabbitmq"
  # One cookie for every node of the chroot (the cluster needs it shared),
  # not the machine's.
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F | head -c 20 >"$ROOT/var/lib/rabbitmq/.erlang.cookie"
  chmod 400 "$ROOT/var/lib/rabbitmq/.erlang.cookie"
  chown -R "$RMQ_UID:$RMQ_UID" "$ROOT/var/lib/rabbitmq" "$ROOT/var/log/rabbitmq" "$ROOT/etc/rabbitmq"
  echo "$RECIPE" >"$ROOT/.acemq-ready"
  log "$RMQ_SUITE chroot ready in $((SECONDS - t0)) s: $(in_root dpkg-query -W -f '${Version}' rabbitmq-server) rabbitmq-server, $(du -sh --one-file-system "$ROOT" | cut -f1)"
}

mount_proc() {
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
}

umount_proc() {
  if [ -d "$ROOT/proc" ] && mountpoint -q "$ROOT/proc"; then umount "$ROOT/proc" || umount -l "$ROOT/proc"; fi
}

# write_node_config NAME writes the node's config and plugins files.
write_node_config() {
  local n=$1
  node_ports "$n"
  cat >"$ROOT/etc/rabbitmq/$n.conf" <<EOF
listeners.tcp.1 = 127.0.0.1:$AMQP
management.tcp.ip = 127.0.0.1
management.tcp.port = $MGMT
loopback_users.guest = true
log.file.level = info
log.console = false
EOF
  local plugins=rabbitmq_management
  if [ "$n" = rmq4 ] || [ "$n" = rmq43 ]; then
    # RabbitMQ's own exporter for internal/alertcheck's drain alerts, on
    # the AMQP port plus 10020 (15694, 15697; the cluster nodes have none).
    printf 'prometheus.tcp.ip = 127.0.0.1\nprometheus.tcp.port = %d\n' $((AMQP + 10020)) >>"$ROOT/etc/rabbitmq/$n.conf"
    plugins=rabbitmq_management,rabbitmq_prometheus
  fi
  echo "[$plugins]." >"$ROOT/etc/rabbitmq/$n.plugins"
  chown "$RMQ_UID:$RMQ_UID" "$ROOT/etc/rabbitmq/$n.conf" "$ROOT/etc/rabbitmq/$n.plugins"
  mkdir -p "$ROOT/var/lib/rabbitmq/$n" "$ROOT/var/log/rabbitmq/$n"
  chown "$RMQ_UID:$RMQ_UID" "$ROOT/var/lib/rabbitmq/$n" "$ROOT/var/log/rabbitmq/$n"
}

tcp_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# node_pid NAME prints the pid of the node's Erlang VM, if it runs.
node_pid() {
  local f="$ROOT/var/lib/rabbitmq/$1.pid" p
  [ -f "$f" ] || return 1
  p=$(cat "$f" 2>/dev/null) || return 1
  [ -n "$p" ] && [ -d "/proc/$p" ] || return 1
  # Make sure the pid is ours: a beam whose root is the chroot.
  [ "$(readlink "/proc/$p/root")" = "$ROOT" ] || return 1
  echo "$p"
}

node_running() { node_pid "$1" >/dev/null; }

# start_node NAME starts a node detached (when it is not running already).
start_node() {
  local n=$1
  node_ports "$n"
  if node_running "$n"; then return 0; fi
  tcp_answers "$AMQP" && die "port $AMQP already answers, and not as node $n of $ROOT"
  write_node_config "$n"
  mount_proc
  # setsid: the node outlives this script and the make that ran it.
  rabbit_cmd "$n" rabbitmq-server
  setsid "${RCMD[@]}" >>"$ROOT/var/log/rabbitmq/$n/startup.log" 2>&1 </dev/null 9>&- &
  START_PID=$!
}

# wait_node NAME waits until the node has booted and answers AMQP and its
# management API.
wait_node() {
  local n=$1 deadline=$((SECONDS + ${2:-120}))
  node_ports "$n"
  while :; do
    if tcp_answers "$AMQP" && curl -fsS -o /dev/null -u guest:guest "http://127.0.0.1:$MGMT/api/overview" 2>/dev/null; then
      return 0
    fi
    if [ -n "${START_PID:-}" ] && ! kill -0 "$START_PID" 2>/dev/null && ! node_running "$n"; then
      tail -30 "$ROOT/var/log/rabbitmq/$n/startup.log" >&2 2>/dev/null || true
      die "node $n@localhost exited while starting (logs: $ROOT/var/log/rabbitmq/$n/)"
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -30 "$ROOT/var/log/rabbitmq/$n/startup.log" >&2 2>/dev/null || true
      die "node $n@localhost did not answer on 127.0.0.1:$AMQP and :$MGMT (logs: $ROOT/var/log/rabbitmq/$n/)"
    fi
    sleep 1
  done
}

# stop_node NAME stops a node: rabbitmqctl stop, then its own pid if needed.
stop_node() {
  local n=$1 p
  node_running "$n" || return 0
  p=$(node_pid "$n")
  ctl "$n" stop >/dev/null 2>&1 || true
  for _ in $(seq 1 30); do [ -d "/proc/$p" ] || return 0; sleep 1; done
  log "node $n did not stop in 30 s; killing its VM (pid $p)"
  kill "$p" 2>/dev/null || true
  sleep 2
  kill -9 "$p" 2>/dev/null || true
}

# any_node_running tells whether any node of the chroot still runs.
any_node_running() {
  local n
  # node_pid only counts a VM whose root is this chroot's
  for n in rmq4 rmq43 rmqc1 rmqc2 rmqc3; do node_running "$n" && return 0; done
  return 1
}

with_lock() {
  mkdir -p "${ROOT%/*}"
  exec 9>"$LOCK"
  flock -w 600 9 || die "another run holds $LOCK"
}
