#!/usr/bin/env bash
# report-screenshot.sh renders an HTML report in headless Chromium and saves
# a PNG (and a PDF, to check the print layout), to look at what a webmaster
# or a lawyer would see.
#
#   scripts/report-screenshot.sh [REPORT.html] [OUT.png] [WIDTH]
#
# Without REPORT.html it writes the sample report of audit/report's
# tests (one site crawled twice, a 503 with Retry-After, a redirect, a
# noindex page, a hostile page title and email subject, an exclusion by
# email); LOHIBOT_REPORT_LANG=it|da|hu picks its language. It installs
# Debian's chromium when it is missing (as root).
set -euo pipefail
cd "$(dirname "$0")/.."

html=${1:-}
out=${2:-/tmp/lohibot-report.png}
width=${3:-1200}

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "report-screenshot: chromium is not installed" >&2
    exit 1
  fi
fi

mkdir -p "$(dirname "$out")"
work=$(mktemp -d /tmp/lohibot-shot.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ -z "$html" ]; then
  html="${out%.png}.html"
  LOHIBOT_REPORT_SAMPLE="$(readlink -f "$(dirname "$html")")/$(basename "$html")" \
    go test -count=1 -run '^TestWriteSample$' ./audit/report >"$work/test.log" 2>&1 || { cat "$work/test.log" >&2; exit 1; }
fi
html=$(readlink -f "$html")

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --hide-scrollbars --user-data-dir="$work/profile")
# A tall window captures the whole report (LOHIBOT_SHOT_HEIGHT to change).
height=${LOHIBOT_SHOT_HEIGHT:-4000}
chromium "${flags[@]}" --window-size="$width,$height" --screenshot="$out" "file://$html" >/dev/null 2>&1
chromium "${flags[@]}" --no-pdf-header-footer --print-to-pdf="${out%.png}.pdf" "file://$html" >/dev/null 2>&1 || true
echo "report:     $html"
echo "screenshot: $out"
[ -f "${out%.png}.pdf" ] && echo "print (PDF): ${out%.png}.pdf"
