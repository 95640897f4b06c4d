#!/usr/bin/env bash
# test.sh runs every test of lohibot: formatting, vet, staticcheck, a
# CGO_ENABLED=0 build and go test -race on all packages, against SQLite and a
# throwaway PostgreSQL cluster, with a real Dovecot for the mailbox tests, a
# real Postfix for the acknowledgement tests and headless Chromium for the
# rendered pages. It installs what is missing from Debian's packages and stops
# what it started.
#
# With CI=true nothing may be missing: a service that cannot be installed or
# started fails the run, and so does a test skipped because one is absent.
# Elsewhere such tests are skipped, and the summary lists them.
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '==> %s\n' "$*"; }
ci=""
[ "${CI:-}" = true ] && ci=1

pg_bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true; }
need_pkgs=()
pg_bin=$(pg_bin_dir)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || need_pkgs+=(postgresql)
command -v dovecot >/dev/null 2>&1 || need_pkgs+=(dovecot-imapd)
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
command -v postfix >/dev/null 2>&1 || [ -x /usr/sbin/postfix ] || need_pkgs+=(postfix)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${need_pkgs[*]}"
    apt-get update -qq >/dev/null
    echo "postfix postfix/main_mailer_type select Local only" | debconf-set-selections 2>/dev/null || true
    for p in "${need_pkgs[@]}"; do
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null ||
        log "$p could not be installed"
    done
    pg_bin=$(pg_bin_dir)
  else
    log "cannot install ${need_pkgs[*]} (not root or no apt-get)"
  fi
fi

missing=()
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
  if su postgres -s /bin/sh -c "$pg_bin/initdb -D $work/pg -A trust -U postgres --no-sync" >"$work/initdb.log" 2>&1 &&
    su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $work/pg -l $work/pg/log -w -o '-p $port -k $work/pg -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300' start" >/dev/null; then
    pg_started=1
    export LOHIBOT_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
    log "PostgreSQL running on port $port"
  else
    missing+=("PostgreSQL (did not start: $work/pg/log)")
  fi
else
  missing+=(PostgreSQL)
fi
if command -v dovecot >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  export LOHIBOT_TEST_DOVECOT=1
else
  missing+=("Dovecot (needs the dovecot-imapd package and root)")
fi
if [ -x /usr/sbin/postfix ] && [ "$(id -u)" = 0 ]; then
  export LOHIBOT_TEST_POSTFIX=1
else
  missing+=("Postfix (needs the postfix package and root)")
fi
command -v chromium >/dev/null 2>&1 || missing+=(Chromium)

if [ ${#missing[@]} -gt 0 ]; then
  if [ -n "$ci" ]; then
    printf 'CI=true and these are missing, so their tests cannot run: %s\n' "${missing[*]}" >&2
    exit 1
  fi
  log "missing (their tests will be skipped): ${missing[*]}"
fi

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
log "go vet"
go vet ./...
(cd compare && go vet ./...)
log "staticcheck"
go tool staticcheck ./...
log "CGO_ENABLED=0 go build"
CGO_ENABLED=0 go build -o "$work/lohibot" ./cmd/lohibot
log "go test -race"
go build -o "$work/testsummary" ./tools/testsummary
# Under CI=true a test skipped for want of a service fails the run.
fail_skips=""
[ -n "$ci" ] && fail_skips='(LOHIBOT_TEST_[A-Z]+ not set|not installed|needs root|chromium|Chromium|postfix|Postfix|dovecot|Dovecot)'
set +e
# compare/ is a nested module (the peer benchmarks and the differential
# tests against other implementations), so its packages are listed apart.
{
  go test -race -count=1 -timeout 20m -json ./...
  echo $? >"$work/status-main"
  (cd compare && go test -race -count=1 -timeout 10m -json ./...)
  echo $? >"$work/status-compare"
} | "$work/testsummary" -fail-skips "$fail_skips"
status=$(( PIPESTATUS[1] | $(cat "$work/status-main") | $(cat "$work/status-compare") ))
set -e
exit "$status"
