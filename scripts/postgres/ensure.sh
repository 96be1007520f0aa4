#!/usr/bin/env bash
# Print the URL of a PostgreSQL database the tests may use (PGW_TEST_DATABASE_URL).
#
# - PGW_TEST_DATABASE_URL already set: that database is the answer, nothing is started.
# - Otherwise a throw-away cluster: the server binaries come from Debian's `postgresql` package
#   when the machine lacks them (CI images often do), the cluster lives in a temp dir owned by the
#   `postgres` user (the server refuses to run as root), listens on a free loopback port only, with
#   trust auth, and is left running for the test run (the CI machine is thrown away after it).
# - Idempotent: a second call in the same state dir finds the running cluster and prints its URL.
#
# Only the URL goes to stdout; every progress line goes to stderr, so `url=$(ensure.sh)` works.
# Env: PGW_PG_STATE_DIR (default /tmp/pgw-postgres), PGW_PG_MAX_CONNECTIONS (default 300: three
# sandbox instances' pools plus the tests' own connections).
set -euo pipefail

if [[ -n "${PGW_TEST_DATABASE_URL:-}" ]]; then
  echo "$PGW_TEST_DATABASE_URL"
  exit 0
fi

state=${PGW_PG_STATE_DIR:-/tmp/pgw-postgres}
max_connections=${PGW_PG_MAX_CONNECTIONS:-300}
database=pgw_test
log() { echo "ensure-postgres: $*" >&2; }

# A server binary directory: Debian puts them under /usr/lib/postgresql/<major>/bin, off PATH.
find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [[ -x "$dir/initdb" && -x "$dir/pg_ctl" && -x "$dir/postgres" ]] && { echo "$dir"; return 0; }
  done
  command -v initdb >/dev/null && command -v pg_ctl >/dev/null && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

as_postgres() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url_of() { echo "postgres://postgres@127.0.0.1:$1/$database"; }

# Already running from an earlier call?
if [[ -f "$state/port" && -f "$state/data/postmaster.pid" ]]; then
  port=$(cat "$state/port")
  bin=$(find_bin || true)
  if [[ -n "$bin" ]] && as_postgres "$bin/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
    url_of "$port"
    exit 0
  fi
fi

if ! bin=$(find_bin); then
  if [[ $(id -u) -ne 0 ]]; then
    log "PostgreSQL server binaries are missing and installing them needs root"; exit 1
  fi
  log "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  # The package's own cluster is not wanted: this script starts its own in a temp dir.
  mkdir -p /etc/postgresql-common
  echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf
  apt-get -o DPkg::Lock::Timeout=600 -qq update >&2
  apt-get -o DPkg::Lock::Timeout=600 -qq install -y postgresql >&2
  bin=$(find_bin)
fi

if [[ $(id -u) -eq 0 ]] && ! getent passwd postgres >/dev/null; then
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

# A free loopback port: random ones in the dynamic range until one refuses a connection (bash's
# /dev/tcp: no python or node needed on a bare CI image).
port=
for _ in $(seq 1 50); do
  candidate=$((20000 + RANDOM % 40000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[[ -n "$port" ]] || { log "no free loopback port found"; exit 1; }

rm -rf "$state"
mkdir -p "$state"
[[ $(id -u) -eq 0 ]] && chown postgres "$state"
log "initdb in $state/data"
as_postgres "$bin/initdb" -D "$state/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$state/initdb.log" 2>&1 \
  || { cat "$state/initdb.log" >&2; exit 1; }
log "starting on 127.0.0.1:$port (max_connections $max_connections)"
as_postgres "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
  -o "-h 127.0.0.1 -p $port -k $state -c max_connections=$max_connections -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  start >&2 || { cat "$state/server.log" >&2; exit 1; }
as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$database" >&2
echo "$port" > "$state/port"
url_of "$port"
