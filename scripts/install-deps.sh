#!/bin/sh
# install-deps.sh — installs the Debian 12 packages wfbridge builds and tests with.
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -u
PKGS="build-essential pkg-config libffi-dev libxml2-dev libsqlite3-dev libjansson-dev check sqlite3 clang graphviz libpq-dev postgresql libmicrohttpd-dev libcurl4-openssl-dev python3-zeep wrk"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "install-deps: apt-get install$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing
    exit $?
fi
echo "install-deps: missing packages:$missing"
echo "install-deps: run:  sudo apt-get update && sudo apt-get install -y$missing"
exit 1
