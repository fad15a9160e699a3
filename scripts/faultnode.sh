#!/usr/bin/env bash
# Starts and stops the fault suite's own RabbitMQ node, beside (never in
# place of) the shared broker on 5672:
#   node acemqfaults@localhost, AMQP 5673, TLS 5676, management 15673 on
#   127.0.0.1, Erlang distribution 25673, everything it writes under
#   ACEMQ_FAULTNODE_DIR (default /tmp/acemq-faultnode).
# It uses the machine's installed rabbitmq-server package (Debian's 3.10)
# and the host's Erlang cookie, and is always driven with
# `rabbitmqctl -n acemqfaults@localhost`: a bare rabbitmqctl would reach the
# shared node.
#
#   scripts/faultnode.sh up     start it (idempotent) and wait until it answers
#   scripts/faultnode.sh down   stop it
#   scripts/faultnode.sh ctl …  rabbitmqctl -n acemqfaults@localhost …
#
# The TLS listener starts with a throwaway certificate made here; the fault
# suite writes its own CA and certificates (made in the test) over the same
# files and clears the node's PEM cache.
set -euo pipefail

# ACEMQ_FAULTNODE_NAME and ACEMQ_FAULTNODE_{AMQP,TLS,MGMT,DIST}_PORT start a
# node of another name on other ports (the suite reads the same variables),
# so that two engineers' fault runs on one machine do not share a node.
NODE=${ACEMQ_FAULTNODE_NAME:-acemqfaults@localhost}
DIR=${ACEMQ_FAULTNODE_DIR:-/tmp/acemq-faultnode}
AMQP_PORT=${ACEMQ_FAULTNODE_AMQP_PORT:-5673}
TLS_PORT=${ACEMQ_FAULTNODE_TLS_PORT:-5676}
MGMT_PORT=${ACEMQ_FAULTNODE_MGMT_PORT:-15673}
DIST_PORT=${ACEMQ_FAULTNODE_DIST_PORT:-25673}

ctl() {
  # -n is never left out: a bare rabbitmqctl targets the shared node.
  RABBITMQ_CONF_ENV_FILE="$DIR/rabbitmq-env.conf" rabbitmqctl -n "$NODE" "$@"
}

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

install_server() {
  command -v rabbitmq-server >/dev/null && return 0
  echo "faultnode: installing Debian's rabbitmq-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq rabbitmq-server curl openssl >/dev/null
  # The package starts the shared node on install; leave it as it is.
}

write_config() {
  mkdir -p "$DIR/mnesia" "$DIR/log" "$DIR/tls"
  if [ ! -s "$DIR/tls/server.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
      -keyout "$DIR/tls/server.key" -out "$DIR/tls/server.pem" >/dev/null 2>&1
    cp "$DIR/tls/server.pem" "$DIR/tls/ca.pem"
  fi
  cat >"$DIR/rabbitmq-env.conf" <<EOF
NODENAME=$NODE
EOF
  cat >"$DIR/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
listeners.ssl.default = 127.0.0.1:$TLS_PORT
ssl_options.cacertfile = $DIR/tls/ca.pem
ssl_options.certfile = $DIR/tls/server.pem
ssl_options.keyfile = $DIR/tls/server.key
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
auth_mechanisms.1 = PLAIN
auth_mechanisms.2 = AMQPLAIN
auth_mechanisms.3 = EXTERNAL
management.tcp.ip = 127.0.0.1
management.tcp.port = $MGMT_PORT
loopback_users = none
# The management API lists a new connection within half a second (default
# 5s), so that the suite can close connections every 2s.
collect_statistics_interval = 500
vm_memory_high_watermark.relative = 0.4
log.file.level = info
log.console = false
EOF
  echo "[rabbitmq_management,rabbitmq_auth_mechanism_ssl]." >"$DIR/enabled_plugins"
  if [ "$(id -u)" = 0 ] && id rabbitmq >/dev/null 2>&1; then
    # The package's wrappers run the server as the rabbitmq user.
    chown -R rabbitmq:rabbitmq "$DIR"
  fi
}

up() {
  install_server
  if answers "$AMQP_PORT" && ctl status >/dev/null 2>&1; then
    echo "faultnode: $NODE answering on $AMQP_PORT"
    return 0
  fi
  write_config
  echo "faultnode: starting $NODE (AMQP $AMQP_PORT, TLS $TLS_PORT, management $MGMT_PORT, dist $DIST_PORT) in $DIR"
  RABBITMQ_NODENAME=$NODE \
  RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
  RABBITMQ_NODE_PORT=$AMQP_PORT \
  RABBITMQ_DIST_PORT=$DIST_PORT \
  RABBITMQ_CONF_ENV_FILE="$DIR/rabbitmq-env.conf" \
  RABBITMQ_CONFIG_FILE="$DIR/rabbitmq.conf" \
  RABBITMQ_ADVANCED_CONFIG_FILE="$DIR/advanced.config" \
  RABBITMQ_ENABLED_PLUGINS_FILE="$DIR/enabled_plugins" \
  RABBITMQ_MNESIA_BASE="$DIR/mnesia" \
  RABBITMQ_LOG_BASE="$DIR/log" \
  RABBITMQ_PID_FILE="$DIR/node.pid" \
  RABBITMQ_SERVER_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    rabbitmq-server -detached
  for _ in $(seq 1 90); do
    if answers "$AMQP_PORT" && ctl await_startup >/dev/null 2>&1; then break; fi
    sleep 1
  done
  answers "$AMQP_PORT" || { echo "faultnode: $NODE did not answer on $AMQP_PORT after 90s (logs in $DIR/log)" >&2; return 1; }
  for _ in $(seq 1 60); do
    curl -fsS -o /dev/null -u guest:guest "http://127.0.0.1:$MGMT_PORT/api/overview" 2>/dev/null && {
      echo "faultnode: $NODE answering on $AMQP_PORT (management $MGMT_PORT)"
      return 0
    }
    sleep 1
  done
  echo "faultnode: the management API of $NODE did not answer on $MGMT_PORT" >&2
  return 1
}

down() {
  if ctl status >/dev/null 2>&1; then
    ctl stop >/dev/null && echo "faultnode: $NODE stopped"
  else
    echo "faultnode: $NODE not running"
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  ctl) shift; ctl "$@" ;;
  *) echo "usage: $0 up|down|ctl <rabbitmqctl args>" >&2; exit 2 ;;
esac
