#!/bin/sh
# bench.sh — `make bench`: builds each bench/bench_*.c against the libraries in $BUILD (like the
# tests are linked) and runs it. Benchmarks print their own table: throughput of the runtime
# and of a hand-coded C baseline measured in the same run, and the ratio.
BUILD=${BUILD:-build}
CC=${CC:-cc}
PKGS="libffi libxml-2.0 sqlite3 libpq"
LIBS=""
for m in bridge converter modern legacy common; do
    [ -f "$BUILD/lib/libwf$m.a" ] && LIBS="$LIBS $BUILD/lib/libwf$m.a"
done
mkdir -p "$BUILD/bench/lib"
status=0
# Native libraries the benchmarks load (bench/libs/NAME/*.c plus NAME.activities.xml) go to
# $BUILD/bench/lib, the library path the benchmarks use (the directory beside their binary).
for dir in bench/libs/*/; do
    [ -d "$dir" ] || continue
    lib=$(basename "$dir")
    # shellcheck disable=SC2086
    if ! $CC -std=c11 -D_DEFAULT_SOURCE -shared -fPIC -O2 -g -Wall -Wextra \
        -o "$BUILD/bench/lib/lib$lib.so" "$dir"*.c; then
        echo "bench: cannot build $dir" >&2
        status=1
        continue
    fi
    for xml in "$dir"*.xml; do
        [ -f "$xml" ] && cp "$xml" "$BUILD/bench/lib/"
    done
done
for src in bench/bench_*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    # shellcheck disable=SC2086
    if ! $CC -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra \
        $(pkg-config --cflags $PKGS) -o "$BUILD/bench/$name" "$src" $LIBS \
        $(pkg-config --libs $PKGS) -ldl -lpthread -lm; then
        echo "bench: cannot build $src" >&2
        status=1
        continue
    fi
    echo "== $name"
    "$BUILD/bench/$name" "$@" || status=1
done
exit $status
