#!/usr/bin/env bash
# RabbitMQ 4.3 (Debian sid's rabbitmq-server) as node rmq43@localhost,
# beside the machine's own broker and the 4.0 node, in a sid chroot
# (scripts/rmq4lib.sh, /var/cache/acemq/sid): AMQP 127.0.0.1:5677,
# management 127.0.0.1:15677, rabbitmq_prometheus 15697, distribution 25677.
# Same commands as scripts/broker4.sh: up, down, status, ctl, leftovers,
# deprecated.
RMQ_SUITE=sid RMQ_NODE=rmq43 exec bash "$(dirname "$0")/broker4.sh" "$@"
