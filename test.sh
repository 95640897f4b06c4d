#!/usr/bin/env bash
# test.sh runs every test of lohibot: formatting, vet, and go test -race on
# all packages, against SQLite and a throwaway PostgreSQL cluster, with a real
# Dovecot for the mailbox tests, a real Postfix for the acknowledgements and
# headless Chromium for the rendered pages.
# It installs PostgreSQL, Dovecot, Postfix and Chromium from Debian's packages when
# they are missing, and stops what it started.
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '==> %s\n' "$*"; }

need_pkgs=()
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || need_pkgs+=(postgresql)
command -v dovecot >/dev/null 2>&1 || need_pkgs+=(dovecot-imapd)
# Postfix delivers the acknowledgements in their integration test; "Local
# only" keeps the package's own instance off the network (it is not started).
command -v postfix >/dev/null 2>&1 || need_pkgs+=(postfix)
# Headless Chromium renders the bot page and the HTML report in their tests;
# it is optional: those tests skip without it.
want_chromium=""
command -v chromium >/dev/null 2>&1 || want_chromium=chromium
if [ ${#need_pkgs[@]} -gt 0 ] || [ -n "$want_chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${need_pkgs[*]} $want_chromium"
    apt-get update -qq >/dev/null
    if [ ${#need_pkgs[@]} -gt 0 ]; then
      echo "postfix postfix/main_mailer_type select Local only" | debconf-set-selections
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
    fi
    if [ -n "$want_chromium" ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
        log "chromium could not be installed; the rendering tests will be skipped"
    fi
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  else
    log "cannot install ${need_pkgs[*]} $want_chromium (not root or no apt-get); those tests will be skipped"
  fi
fi

work=$(mktemp -d /tmp/lohibot-test.XXXXXX)
chmod 755 "$work"
pg_started=""
cleanup() {
  if [ -n "$pg_started" ]; then
    log "stopping PostgreSQL"
    su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $work/pg -m fast -w stop" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] && id postgres >/dev/null 2>&1; then
  port=$(( 20000 + RANDOM % 20000 ))
  mkdir -p "$work/pg" && chown postgres "$work/pg"
  su postgres -s /bin/sh -c "$pg_bin/initdb -D $work/pg -A trust -U postgres --no-sync" >"$work/initdb.log" 2>&1
  su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $work/pg -l $work/pg/log -w -o '-p $port -k $work/pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300' start" >/dev/null
  pg_started=1
  export LOHIBOT_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  log "PostgreSQL running on port $port"
fi
if command -v dovecot >/dev/null 2>&1; then
  export LOHIBOT_TEST_DOVECOT=1
fi
if command -v postfix >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  export LOHIBOT_TEST_POSTFIX=1
fi

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
log "go vet"
go vet ./...
log "CGO_ENABLED=0 go build"
CGO_ENABLED=0 go build -o "$work/lohibot" ./cmd/lohibot
log "go test -race"
go test -race -count=1 -timeout 20m ./... 2>&1 | tee "$work/test.log"
status=${PIPESTATUS[0]}
passed=$(grep -c '^ok ' "$work/test.log" || true)
failed=$(grep -c '^FAIL' "$work/test.log" || true)
echo "$passed passed, $failed failed"
exit "$status"
