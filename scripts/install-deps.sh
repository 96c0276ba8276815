#!/bin/sh
# install-deps.sh — installs the Debian 12 packages wfbridge builds and tests with, only those
# missing. As root it runs apt-get; otherwise it prints the exact command and fails.
#   sh scripts/install-deps.sh            what `make` and `make test` need
#   sh scripts/install-deps.sh --server   also the PostgreSQL server, for the *_pg suites
#                                         (they run when WFBRIDGE_TEST_PG is set; .ci/run)
#   sh scripts/install-deps.sh --fuzz     also clang, for `make fuzz`
# One package per line; add new ones at the end of their list.
set -u
PKGS="
build-essential
pkg-config
libffi-dev
libxml2-dev
libsqlite3-dev
libjansson-dev
check
sqlite3
graphviz
libpq-dev
nettle-dev
"
for arg in "$@"; do
    case "$arg" in
    --server) PKGS="$PKGS postgresql" ;;
    --fuzz) PKGS="$PKGS clang" ;;
    *) echo "install-deps: unknown option $arg (--server, --fuzz)" >&2; exit 2 ;;
    esac
done
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
