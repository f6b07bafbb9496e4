#!/bin/sh
# The image's entrypoint, $ROCKETMQ_HOME/bin/docker-entrypoint.sh as in Apache's RocketMQ image
# (rocketmq-docker), for the roles this image has:
#   nameserver [ARGS] (the default command), or NODE_ROLE=nameserver: mqnamesrv ARGS. As in
#     Apache's script, with NODE_ROLE set the first argument is dropped whatever it is (there
#     it is the image's placeholder command).
#   controller [ARGS], or NODE_ROLE=controller: mqcontroller ARGS, when the image has it.
#   no arguments, or options only (`-c FILE`, `--set k=v`): mqnamesrv with them.
#   anything else: run as given, e.g. `sh mqnamesrv -c FILE`, `nsadmin clusterList`, `sh`.
# Each step execs, so the server ends up as the container's PID 1 and gets its SIGTERM.
set -e
bin=${0%/*} # the entrypoint is named by its absolute path
role=
case $1 in
nameserver | controller | broker) role=$1 ;;
esac
if [ -z "$role" ]; then
    case $NODE_ROLE in
    nameserver | controller | broker) role=$NODE_ROLE ;;
    esac
fi
if [ -n "$role" ] && [ $# -gt 0 ]; then
    shift
fi
case $role in
nameserver)
    exec "$bin/mqnamesrv" "$@"
    ;;
controller)
    if [ ! -x "$bin/mqcontroller" ]; then
        echo "docker-entrypoint.sh: this image has no mqcontroller (use the NameServer's embedded controller, enableControllerInNamesrv)" >&2
        exit 2
    fi
    exec "$bin/mqcontroller" "$@"
    ;;
broker)
    echo "docker-entrypoint.sh: this image runs the NameServer only; start brokers from Apache's RocketMQ image" >&2
    exit 2
    ;;
esac
case $1 in
"" | -*) exec "$bin/mqnamesrv" "$@" ;;
esac
exec "$@"
