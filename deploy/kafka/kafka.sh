#!/usr/bin/env bash
# Start, stop and inspect a real single-node Apache Kafka broker (KRaft: broker + controller in one JVM).
#
#   deploy/kafka/kafka.sh fetch         resolve kafka_2.13 and its runtime jars from Maven Central into the cache
#   deploy/kafka/kafka.sh start [--fresh]  fetch (once), format storage (once), start, wait for metadata, apply topics
#   deploy/kafka/kafka.sh stop          SIGTERM, then wait for a clean shutdown
#   deploy/kafka/kafka.sh status        exit 0 when the broker is running
#
# Settings (environment):
#   KAFKA_PORT        client port on 127.0.0.1 (default 9092); the controller listens on KAFKA_PORT+1
#   KAFKA_HOST        listen address (default 127.0.0.1)
#   KAFKA_STATE_DIR   data, config, log and pid file (default var/kafka)
#   KAFKA_CACHE_DIR   downloaded jars (default .cache/kafka); a second start reuses it with no download
#   KAFKA_HEAP_OPTS   JVM heap (default "-Xms256m -Xmx512m")
#   KAFKA_JVM_PERFORMANCE_OPTS  garbage collector and JIT flags (default "-XX:+UseG1GC
#                     -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1": the quick C1 compiler only. A
#                     broker started for a run, a test or a load test spent about 40 % of its CPU in the
#                     C2 compiler's threads for its first minutes on a 2-core machine; C1 only cut its CPU
#                     per hand by a third under `cardroom loadtest`: docs/capacity.md)
#   KAFKA_TOPICS      topic catalogue applied at start (default deploy/kafka/topics.yaml)
#   PYTHON            interpreter with kafka-python (default .venv/bin/python)
#   KAFKA_AUTH        "none" (default) or "scram": clients authenticate with SASL/SCRAM-SHA-512 as one
#                     user per service (created at format time with --add-scram; passwords made once in
#                     STATE/credentials/NAME, mode 0600) and the StandardAuthorizer enforces the ACLs of
#                     KAFKA_ACLS (default deploy/kafka/acls.yaml); the broker itself is the super user admin
#   KAFKA_USERS       users made with KAFKA_AUTH=scram (default: the services, operator and admin)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

host="${KAFKA_HOST:-127.0.0.1}"
port="${KAFKA_PORT:-9092}"
controller_port="$((port + 1))"
state="${KAFKA_STATE_DIR:-var/kafka}"
cache="${KAFKA_CACHE_DIR:-.cache/kafka}"
heap="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
performance="${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1}"
topics="${KAFKA_TOPICS:-$here/topics.yaml}"
python="${PYTHON:-$root/.venv/bin/python}"
auth="${KAFKA_AUTH:-none}"
acls="${KAFKA_ACLS:-$here/acls.yaml}"
users="${KAFKA_USERS:-admin evaluator wallet dealer connection_monitor gateway tournament operator}"
case "$auth" in none|scram) ;; *) echo "kafka: KAFKA_AUTH must be none or scram, not $auth" >&2; exit 2 ;; esac
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")"
libs="$cache/$version/libs"

mkdir -p "$state"
state="$(cd "$state" && pwd)"
pidfile="$state/kafka.pid"
logfile="$state/kafka.log"
# shellcheck disable=SC2206
jvm=(java $heap $performance -Djava.awt.headless=true
     "-Xlog:gc:file=$state/gc.log:time,uptime:filecount=2,filesize=10m"
     "-Dlog4j2.configurationFile=$here/log4j2.properties" "-Dkafka.logs.dir=$state" -cp "$libs/*")

say() { echo "kafka: $*" >&2; }

fetch() {
  if [ -f "$libs/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || { say "Maven (mvn) is required to fetch Kafka $version"; exit 1; }
  command -v java >/dev/null || { say "Java 17+ is required to run Kafka $version"; exit 1; }
  say "fetching org.apache.kafka:kafka_2.13:$version and its runtime dependencies (Maven Central)"
  rm -rf "$libs.tmp" && mkdir -p "$libs.tmp"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$(cd "$libs.tmp" && pwd)" >&2
  rm -rf "$libs" && mv "$libs.tmp" "$libs" && touch "$libs/.complete"
  say "cached $(ls "$libs" | wc -l) jars in $libs"
}

running_pid() {
  [ -f "$pidfile" ] || return 1
  local pid; pid="$(cat "$pidfile")"
  kill -0 "$pid" 2>/dev/null || return 1
  # a broker killed with -9 stays a zombie until something reaps it: that is not a running broker
  if grep -qs '^State:[[:space:]]*Z' "/proc/$pid/status"; then return 1; fi
  echo "$pid"
}

# One random password per user, made once (kept across restarts: the SCRAM credentials live in the
# formatted metadata). Clients read theirs from STATE/credentials/NAME.
make_credentials() {
  mkdir -p "$state/credentials" && chmod 700 "$state/credentials"
  local user
  for user in $users; do
    if [ ! -s "$state/credentials/$user" ]; then
      (umask 077 && "$python" -c 'import secrets; print(secrets.token_hex(24))' > "$state/credentials/$user")
    fi
  done
}

password_of() { cat "$state/credentials/$1"; }

write_config() {
  mkdir -p "$state/data"
  local data; data="$(cd "$state/data" && pwd)"
  local client_protocol=PLAINTEXT
  [ "$auth" = scram ] && client_protocol=SASL_PLAINTEXT
  cat > "$state/server.properties" <<PROPS
# Generated by deploy/kafka/kafka.sh — single combined broker + controller (KRaft).
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$host:$controller_port
listeners=$client_protocol://$host:$port,CONTROLLER://$host:$controller_port
advertised.listeners=$client_protocol://$host:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=$client_protocol
listener.security.protocol.map=$client_protocol:$client_protocol,CONTROLLER:PLAINTEXT
log.dirs=$data
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.flush.interval.messages=1
# One node is broker and controller: a JVM starved for CPU or disk for a few seconds must not fence its
# own broker (that takes every partition offline and every client into metadata timeouts); the
# default 9 s session was seen to expire under a loaded 2-core machine. Heartbeats stay every 2 s.
broker.session.timeout.ms=30000
PROPS
  if [ "$auth" = scram ]; then
    cat >> "$state/server.properties" <<PROPS
# KAFKA_AUTH=scram: every client authenticates; nothing is allowed that deploy/kafka/acls.yaml does not grant.
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$(password_of admin)";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
# The controller listener (loopback, the broker's own link to its controller) is ANONYMOUS.
super.users=User:admin;User:ANONYMOUS
PROPS
    chmod 600 "$state/server.properties"
  fi
}

format_storage() {
  if [ -f "$state/data/meta.properties" ]; then
    # SCRAM users are made at format time: a state formatted in the other mode cannot serve this one.
    local formatted; formatted="$(cat "$state/data/cardroom-auth" 2>/dev/null || echo none)"
    if [ "$formatted" != "$auth" ]; then
      say "$state was formatted with KAFKA_AUTH=$formatted, not $auth: start it with KAFKA_AUTH=$formatted,"
      say "or remove it (its topics are lost) to start afresh"
      exit 2
    fi
    return 0
  fi
  local cluster_id
  cluster_id="$("${jvm[@]}" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)"
  say "formatting KRaft storage (cluster $cluster_id) in $state/data"
  local scram=() user
  if [ "$auth" = scram ]; then
    for user in $users; do scram+=(--add-scram "SCRAM-SHA-512=[name=$user,password=$(password_of "$user")]"); done
  fi
  "${jvm[@]}" kafka.tools.StorageTool format --standalone -t "$cluster_id" -c "$state/server.properties" \
    "${scram[@]}" >>"$logfile" 2>&1
  echo "$auth" > "$state/data/cardroom-auth"
}

# admin.py as the broker's super user when KAFKA_AUTH=scram.
admin() {
  if [ "$auth" = scram ]; then
    KAFKA_USERNAME=admin KAFKA_PASSWORD="$(password_of admin)" "$python" "$here/admin.py" "$@"
  else
    "$python" "$here/admin.py" "$@"
  fi
}

start() {
  local fresh=0
  [ "${1:-}" = "--fresh" ] && fresh=1
  if pid="$(running_pid)"; then say "already running (pid $pid) on $host:$port"; echo "$host:$port"; return 0; fi
  fetch
  for p in "$port" "$controller_port"; do
    if (exec 3<>"/dev/tcp/$host/$p") 2>/dev/null; then
      say "port $host:$p is already in use by another process (not this broker: no live pid in $pidfile);"
      say "choose another with KAFKA_PORT (the controller uses KAFKA_PORT+1)"
      exit 1
    fi
  done
  if [ "$fresh" = 1 ]; then rm -rf "$state"; mkdir -p "$state"; fi
  [ "$auth" = scram ] && make_credentials
  write_config
  format_storage
  say "starting broker on $host:$port (controller $host:$controller_port), log $logfile"
  # setsid: the broker gets its own session, so a terminal Ctrl-C reaches it only through us;
  # setsid execs java directly, so $! is the broker's pid.
  setsid "${jvm[@]}" kafka.Kafka "$state/server.properties" >>"$logfile" 2>&1 < /dev/null &
  echo $! > "$pidfile"
  if ! admin --bootstrap "$host:$port" --pid "$(cat "$pidfile")" wait --timeout 120; then
    say "broker did not come up; last log lines:"; tail -n 40 "$logfile" >&2 || true
    stop || true
    exit 1
  fi
  admin --bootstrap "$host:$port" apply "$topics"
  if [ "$auth" = scram ]; then admin --bootstrap "$host:$port" acls "$acls"; fi
  say "ready on $host:$port (pid $(cat "$pidfile"))"
  echo "$host:$port"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then rm -f "$pidfile"; say "not running"; return 0; fi
  say "stopping broker (pid $pid): SIGTERM"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; say "stopped"; return 0; }
    sleep 0.1
  done
  say "broker did not stop within 60 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

case "${1:-}" in
  fetch) fetch ;;
  start) shift; start "$@" ;;
  stop) stop ;;
  status) if pid="$(running_pid)"; then echo "running pid $pid on $host:$port"; else echo "not running"; exit 1; fi ;;
  *) echo "usage: $0 {fetch|start [--fresh]|stop|status}" >&2; exit 2 ;;
esac
