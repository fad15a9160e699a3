#!/usr/bin/env bash
# Makes sure a RabbitMQ broker with the management plugin answers at
# ACEMQ_TEST_URL (default amqp://guest:guest@localhost:5672/).
#   1. a broker already answers: use it (and enable the management plugin
#      when it is a local rabbitmq-server we can reach with rabbitmqctl);
#   2. rabbitmq-server is installed: start it detached and wait;
#   3. otherwise install Debian's rabbitmq-server, then start it.
set -euo pipefail

url=${ACEMQ_TEST_URL:-amqp://guest:guest@localhost:5672/}
hostport=${url#*@}; hostport=${hostport%%/*}
host=${hostport%%:*}; port=${hostport##*:}
[ "$port" = "$host" ] && port=5672
[ "$host" = "localhost" ] && host=127.0.0.1

answers() { (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }

wait_for() {
  for _ in $(seq 1 90); do
    answers && return 0
    sleep 1
  done
  echo "broker: nothing answers at $host:$port after 90s" >&2
  return 1
}

enable_management() {
  command -v rabbitmq-plugins >/dev/null || return 0
  if ! rabbitmq-plugins list -e -m 2>/dev/null | grep -qx rabbitmq_management; then
    rabbitmq-plugins enable rabbitmq_management >/dev/null
  fi
  for _ in $(seq 1 60); do
    curl -fsS -o /dev/null -u guest:guest "http://$host:15672/api/overview" 2>/dev/null && return 0
    sleep 1
  done
  echo "broker: the management API did not answer on $host:15672" >&2
  return 1
}

if answers; then
  echo "broker: answering at $host:$port"
  enable_management
  exit 0
fi

if ! command -v rabbitmq-server >/dev/null; then
  echo "broker: installing Debian's rabbitmq-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq rabbitmq-server curl >/dev/null
fi

echo "broker: starting rabbitmq-server"
rabbitmq-server -detached
wait_for
rabbitmqctl await_startup >/dev/null 2>&1 || true
enable_management
echo "broker: answering at $host:$port"
