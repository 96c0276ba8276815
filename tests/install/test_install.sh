#!/bin/sh
# test_install.sh — `make install` into a scratch DESTDIR, then a program outside the tree
# (tests/install/use.c) is linked against the installed library both ways, with only what
# pkg-config says: shared (libwfbridge.so.0 must be NEEDED) and static (--static flags,
# the archive, no libwfbridge.so needed); both must run. Also checks the man pages, the bash
# completion and the docs. Run by `make test` (target install-check).
# Usage: test_install.sh BUILD   (CC and LDFLAGS_EXTRA from the environment)
set -eu
build=$1
cc=${CC:-cc}
extra=${LDFLAGS_EXTRA:-}
dest=$(mktemp -d "${TMPDIR:-/tmp}/wfb-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM
prefix=/opt/wfb
fail() { echo "test_install: $*" >&2; exit 1; }

make --no-print-directory -s BUILD="$build" DESTDIR="$dest" PREFIX="$prefix" install >/dev/null
root=$dest$prefix
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
pkg-config --exists wfbridge || fail "no wfbridge.pc"
[ -L "$root/lib/libwfbridge.so" ] && [ -L "$root/lib/libwfbridge.so.0" ] ||
    fail "libwfbridge.so and .so.0 are not links"
[ -f "$root/lib/libwfbridge.a" ] || fail "no libwfbridge.a"
[ -x "$root/bin/wfbridge" ] || fail "no bin/wfbridge"
for verb in convert run run-legacy instances resume inspect host verify start; do
    [ -s "$root/share/man/man1/wfbridge-$verb.1" ] || fail "no man page for $verb"
done
grep -q 'max\\-attempts' "$root/share/man/man1/wfbridge-host.1" || fail "stale man page"
[ -s "$root/share/bash-completion/completions/wfbridge" ] || fail "no bash completion"
[ -s "$root/share/doc/wfbridge/formats.md" ] || fail "no docs"

src=$(dirname "$0")/use.c
# shared: exactly what `pkg-config --cflags --libs` says
# shellcheck disable=SC2046
$cc -o "$dest/use_shared" "$src" $(pkg-config --cflags --libs wfbridge) $extra ||
    fail "cannot link against the shared library"
readelf -d "$dest/use_shared" | grep -q 'NEEDED.*libwfbridge\.so\.0' ||
    fail "use_shared does not need libwfbridge.so.0"
out=$(LD_LIBRARY_PATH="$root/lib" "$dest/use_shared") || fail "use_shared failed"
[ "$out" = "$(printf 'hello from an installed wfbridge\nClosed')" ] || fail "use_shared: $out"
# static: the archive, then what `pkg-config --static --libs` adds
# shellcheck disable=SC2046
$cc -o "$dest/use_static" "$src" $(pkg-config --cflags wfbridge) -Wl,--as-needed \
    -Wl,-Bstatic -lwfbridge -Wl,-Bdynamic $(pkg-config --static --libs wfbridge) $extra ||
    fail "cannot link against the static library with pkg-config --static"
if readelf -d "$dest/use_static" | grep -q 'NEEDED.*libwfbridge'; then
    fail "use_static needs the shared library"
fi
out=$("$dest/use_static") || fail "use_static failed"
[ "$out" = "$(printf 'hello from an installed wfbridge\nClosed')" ] || fail "use_static: $out"
echo "install: shared and static links run (pkg-config, DESTDIR)"
