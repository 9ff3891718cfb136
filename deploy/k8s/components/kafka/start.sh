#!/bin/sh
# Start the broker of server.properties (components/kafka, docker-compose.yml): format the KRaft storage
# the first time with one SCRAM-SHA-512 user per file of the users' Secret (file name = user, content =
# password, no trailing newline), then run the broker. The users are made at format time, as
# deploy/kafka/kafka.sh makes them: a user added or a password changed later is set with
# kafka-configs.sh as admin (docs/operations.md, "Secrets").
set -eu
home="${KAFKA_HOME:-/opt/kafka}"
config="${KAFKA_CONFIG:-/etc/kafka-cardroom/server.properties}"
users="${KAFKA_USERS_DIR:-/etc/kafka-users}"
say() { echo "kafka: $*" >&2; }
[ -n "${CLUSTER_ID:-}" ] || { say "CLUSTER_ID is not set"; exit 2; }
[ -s "$users/admin" ] || { say "no password for the super user admin in $users (the users' Secret)"; exit 2; }
set --
for file in "$users"/*; do
  name="$(basename "$file")"
  # The broker reads admin's password verbatim (a trailing newline would be part of it), and
  # --add-scram's [name=...,password=...] syntax has no quoting: letters, digits, '.', '_', '-' only.
  if [ "$(wc -l < "$file")" -ne 0 ]; then say "$file ends with a newline: write it with printf %s"; exit 2; fi
  password="$(cat "$file")"
  case "$name$password" in
    *[!A-Za-z0-9._-]*) say "$file: user names and passwords may hold only A-Z a-z 0-9 . _ -"; exit 2 ;;
  esac
  [ -n "$password" ] || { say "$file is empty"; exit 2; }
  set -- "$@" --add-scram "SCRAM-SHA-512=[name=$name,password=$password]"
done
"$home/bin/kafka-storage.sh" format --ignore-formatted -t "$CLUSTER_ID" -c "$config" "$@"
exec "$home/bin/kafka-server-start.sh" "$config"
