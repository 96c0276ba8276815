#!/bin/sh
# bench.sh — `make bench` (QUICK=1: tiny counts, under a minute, what CI runs): builds each
# bench/bench_*.c against the libraries in $BUILD (like the tests are linked), runs it, and
# assembles the report: every program writes its own Markdown section (WFBENCH_MD) and one JSON
# object per figure (WFBENCH_JSON); a program that writes no section gets its printed output.
# Output: $BUILD/bench/REPORT.md and figures.json; a full run also refreshes bench/REPORT.md
# and bench/figures.json. Exits 1 when a program fails to build or run.
BUILD=${BUILD:-build}
CC=${CC:-cc}
QUICK=${QUICK:-}
PKGS=${PKGS:-"libffi libxml-2.0 sqlite3 jansson libpq libmicrohttpd libcurl"} # the Makefile passes its own list
LIBS=""
for m in bridge converter modern legacy common; do
    [ -f "$BUILD/lib/libwf$m.a" ] && LIBS="$LIBS $BUILD/lib/libwf$m.a"
done
out="$BUILD/bench"
mkdir -p "$out/lib" "$out/sections"
rm -f "$out"/sections/* "$out/figures.jsonl"
if [ -n "$QUICK" ] && [ "$QUICK" != 0 ]; then
    WFBENCH_QUICK=1
    mode="quick (QUICK=1: tiny counts; proves every scenario runs, the figures mean nothing)"
else
    WFBENCH_QUICK=0
    mode="full"
fi
export WFBENCH_QUICK
status=0
failed=""
# Native libraries the benchmarks load (bench/libs/NAME/*.c plus NAME.activities.xml) go to
# $BUILD/bench/lib, the library path the benchmarks use (the directory beside their binary).
for dir in bench/libs/*/; do
    [ -d "$dir" ] || continue
    lib=$(basename "$dir")
    # shellcheck disable=SC2086
    if ! $CC -std=c11 -D_DEFAULT_SOURCE -shared -fPIC -O2 -g -Wall -Wextra \
        -o "$out/lib/lib$lib.so" "$dir"*.c; then
        echo "bench: cannot build $dir" >&2
        status=1
        continue
    fi
    for xml in "$dir"*.xml; do
        [ -f "$xml" ] && cp "$xml" "$out/lib/"
    done
done
# The report's order (the paper's); programs not listed follow in name order.
ORDER="bench_component bench_interop bench_complex bench_activation bench_persist bench_tracking bench_multicore bench_fleet"
programs=""
for name in $ORDER; do
    [ -f "bench/$name.c" ] && programs="$programs bench/$name.c"
done
for src in bench/bench_*.c; do
    case " $programs " in *" $src "*) ;; *) programs="$programs $src" ;; esac
done
dbos_note=""
dbos_rows=""
pg_dir=""
pg_stop() {
    [ -n "$pg_dir" ] || return 0
    $pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$pg_dir"
    pg_dir=""
}
trap pg_stop EXIT
pg_start() { # sets pg_dir, pg_url_base; or dbos_note saying why not
    pg_bin=$(pg_config --bindir 2>/dev/null)
    [ -x "$pg_bin/initdb" ] || pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
    if [ ! -x "$pg_bin/initdb" ] || [ ! -x "$pg_bin/pg_ctl" ] || ! command -v psql >/dev/null; then
        dbos_note="DBOS: skipped, PostgreSQL (initdb, pg_ctl, psql) is not installed (apt-get install postgresql)."
        return 1
    fi
    pg_as=""
    if [ "$(id -u)" = 0 ]; then
        pg_user=postgres
        id "$pg_user" >/dev/null 2>&1 || pg_user=nobody
        pg_as="runuser -u $pg_user --"
    fi
    # /tmp, not $TMPDIR: the socket path must stay short and reachable by that user.
    pg_dir=$(mktemp -d /tmp/wfbench-pg.XXXXXX) || { dbos_note="DBOS: skipped, no temporary directory."; return 1; }
    chmod 755 "$pg_dir"
    [ -n "$pg_as" ] && chown "$pg_user" "$pg_dir"
    if ! $pg_as "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U bench --no-sync >"$pg_dir/initdb.log" 2>&1; then
        dbos_note="DBOS: skipped, initdb failed: $(tail -1 "$pg_dir/initdb.log")"
        pg_stop
        return 1
    fi
    if ! $pg_as "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
        -o "-k $pg_dir -c listen_addresses= -c max_connections=50" start >/dev/null 2>&1; then
        dbos_note="DBOS: skipped, PostgreSQL did not start: $(tail -1 "$pg_dir/server.log" 2>/dev/null)"
        pg_stop
        return 1
    fi
    if ! psql -h "$pg_dir" -U bench -d postgres -q -c "CREATE DATABASE dbos_on" \
        -c "CREATE DATABASE dbos_off" -c "ALTER DATABASE dbos_off SET synchronous_commit = off" \
        >/dev/null 2>&1; then
        dbos_note="DBOS: skipped, cannot create its databases."
        pg_stop
        return 1
    fi
    return 0
}
# A full run without a PostgreSQL server named (WFBRIDGE_BENCH_PG / WFBRIDGE_TEST_PG) starts
# a private one (pg_start) for the fleet's PostgreSQL cells too (DBOS uses it afterwards).
if [ "$WFBENCH_QUICK" = 0 ] && [ -z "${WFBRIDGE_BENCH_PG:-}" ] && [ -z "${WFBRIDGE_TEST_PG:-}" ] &&
    pg_start; then
    WFBRIDGE_BENCH_PG="host=$pg_dir dbname=postgres user=bench"
    export WFBRIDGE_BENCH_PG
fi
dbos_note="" # a failed start above is tried again (and reported) by the DBOS section
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for src in $programs; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    # shellcheck disable=SC2086
    if ! $CC -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra \
        $(pkg-config --cflags $PKGS) -o "$out/$name" "$src" $LIBS \
        $(pkg-config --libs $PKGS) -ldl -lpthread -lm; then
        echo "bench: cannot build $src" >&2
        status=1
        failed="$failed $name(build)"
        continue
    fi
    echo "== $name"
    t0=$(date +%s)
    if ! WFBENCH_MD="$out/sections/$name.md" WFBENCH_JSON="$out/figures.jsonl" \
        "$out/$name" "$@" > "$out/sections/$name.txt"; then
        status=1
        failed="$failed $name"
    fi
    cat "$out/sections/$name.txt"
    echo "   ($name: $(( $(date +%s) - t0 )) s)"
done

# ---- charts: SVG of the component and interop tables (gnuplot, Debian's gnuplot-nox) --------
# A chart is drawn from figures.jsonl: one cluster per row, one bar per column, for the
# figures of TABLE in UNIT.
chart() { # chart TABLE UNIT TITLE
    dat="$out/$1.dat"
    awk -v table="$1" -v unit="$2" '
        function field(name,   m) {
            if (match($0, "\"" name "\": \"[^\"]*\"")) {
                m = substr($0, RSTART, RLENGTH); sub("^\"" name "\": \"", "", m); sub("\"$", "", m)
                return m
            }
            return ""
        }
        field("table") == table && field("unit") == unit {
            row = field("row"); col = field("column")
            match($0, /"median": [^,]*/); v = substr($0, RSTART + 10, RLENGTH - 10)
            if (!(row in seen)) { seen[row] = 1; rows[++nr] = row }
            if (!(col in cseen)) { cseen[col] = 1; cols[++nc] = col }
            val[row, col] = v
        }
        END {
            if (!nr) exit 1
            printf "row"; for (c = 1; c <= nc; c++) printf "\t\"%s\"", cols[c]; printf "\n"
            for (r = 1; r <= nr; r++) {
                printf "\"%s\"", rows[r]
                for (c = 1; c <= nc; c++) printf "\t%s", ((rows[r], cols[c]) in val) ? val[rows[r], cols[c]] : "NaN"
                printf "\n"
            }
        }' "$out/figures.jsonl" > "$dat" 2>/dev/null || return 1
    ncols=$(head -1 "$dat" | awk -F'\t' '{print NF - 1}')
    plot="plot '$dat' using 2:xtic(1) title columnheader(2)"
    i=3
    while [ "$i" -le $((ncols + 1)) ]; do
        plot="$plot, '' using $i title columnheader($i)"
        i=$((i + 1))
    done
    gnuplot <<GP 2>/dev/null
set terminal svg size 1000,520 dynamic font 'sans,11'
set output '$out/$1.svg'
set title '$3'
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set logscale y
set ylabel '$2 (log scale)'
set xtics rotate by -30 scale 0 noenhanced
set key top right noenhanced
set grid ytics
$plot
GP
}
charts=""
charts_note=""
if [ "$WFBENCH_QUICK" = 1 ]; then
    charts_note="Charts: not drawn in quick mode."
else
    if ! command -v gnuplot >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "bench: installing gnuplot-nox for the charts"
        apt-get install -y -qq gnuplot-nox >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq gnuplot-nox >/dev/null 2>&1; } || true
    fi
    if ! command -v gnuplot >/dev/null 2>&1; then
        charts_note="Charts: skipped, gnuplot is not installed and could not be (apt-get install gnuplot-nox as root)."
    else
        for t in component interop; do
            unit="workflows per CPU-second"
            if chart "$t" "$unit" "$t table: $unit" && [ -s "$out/$t.svg" ]; then
                charts="$charts $t"
            fi
        done
        [ -n "$charts" ] || charts_note="Charts: gnuplot drew nothing (no figures in the tables)."
    fi
fi

# ---- peers: bpmn-engine (npm) on the same in-memory workloads --------------------------------
# Installed under $BUILD from the npm registry (bench/peers/bpmn/package.json pins the version);
# when it cannot be installed or run, the report says why. Figures go to figures.jsonl.
fig() { # fig PROGRAM ROW COLUMN UNIT: the median of one figure, empty if none
    awk -v p="$1" -v r="$2" -v c="$3" -v u="$4" '
        function field(name,   m) {
            if (match($0, "\"" name "\": ?\"[^\"]*\"")) {
                m = substr($0, RSTART, RLENGTH); sub("^\"" name "\": ?\"", "", m); sub("\"$", "", m)
                return m
            }
            return ""
        }
        field("program") == p && field("row") == r && field("column") == c && field("unit") == u {
            match($0, /"median": ?[^,]*/); v = substr($0, RSTART, RLENGTH); sub(/"median": ?/, "", v)
            print v; exit
        }' "$out/figures.jsonl" 2>/dev/null
}
peer_rows=""
peer_note=""
if [ "$WFBENCH_QUICK" = 1 ]; then
    peer_note="bpmn-engine: not run in quick mode."
elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    peer_note="bpmn-engine: skipped, node and npm are not installed."
else
    pdir="$out/peers/bpmn"
    mkdir -p "$pdir"
    cp bench/peers/bpmn/package.json bench/peers/bpmn/bench.mjs bench/peers/stats.mjs "$pdir/"
    if [ ! -d "$pdir/node_modules/bpmn-engine" ] &&
        ! (cd "$pdir" && timeout 300 npm install --no-audit --no-fund --silent >/dev/null 2>&1); then
        peer_note="bpmn-engine: skipped, npm install failed (is the npm registry reachable?)."
    elif ! (cd "$pdir" && node bench.mjs > peer.jsonl 2> peer.err); then
        peer_note="bpmn-engine: failed to run: $(head -c 300 "$pdir/peer.err")"
    else
        echo "== bpmn-engine (peer)"
        sed 's/^{/{"program": "peer_bpmn", "table": "peers", /' "$pdir/peer.jsonl" |
            tee -a "$out/figures.jsonl"
        peer_rows=yes
    fi
fi

# ---- peers: DBOS (npm) on a PostgreSQL of its own: the durable 5-step workload ---------------
# PostgreSQL is started for the run with initdb / pg_ctl (Debian's postgresql package) in a
# temporary directory, listening on a Unix socket only, as an unprivileged user (as root: the
# postgres user, else nobody); it is stopped and removed at the end. Two databases: the
# defaults (synchronous_commit=on, a commit waits for its WAL flush, like durability FULL) and
# synchronous_commit=off (like NORMAL: a crash may drop the last commits).
if [ "$WFBENCH_QUICK" = 1 ]; then
    dbos_note="DBOS: not run in quick mode."
elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    dbos_note="DBOS: skipped, node and npm are not installed."
else
    ddir="$out/peers/dbos"
    mkdir -p "$ddir"
    cp bench/peers/dbos/package.json bench/peers/dbos/bench.mjs bench/peers/stats.mjs "$ddir/"
    if [ ! -d "$ddir/node_modules/@dbos-inc/dbos-sdk" ] &&
        ! (cd "$ddir" && timeout 300 npm install --no-audit --no-fund --silent >/dev/null 2>&1); then
        dbos_note="DBOS: skipped, npm install of @dbos-inc/dbos-sdk failed (is the npm registry reachable?)."
    elif [ -n "$pg_dir" ] || pg_start; then
        echo "== DBOS (peer, PostgreSQL $("$pg_bin/postgres" --version 2>/dev/null | awk '{print $3}'))"
        : > "$ddir/peer.jsonl"
        for sc in on off; do
            if ! (cd "$ddir" && DBOS_SYSTEM_DATABASE_URL="postgresql://bench@localhost/dbos_$sc?host=$pg_dir" \
                timeout 600 node bench.mjs "synchronous_commit $sc" > run.out 2> peer.err); then
                dbos_note="DBOS: failed to run (synchronous_commit $sc): $(grep -v Deprecation "$ddir/peer.err" | head -c 300)"
                break
            fi
            grep '^{' "$ddir/run.out" >> "$ddir/peer.jsonl"
        done
        pg_stop
        if [ -z "$dbos_note" ]; then
            sed 's/^{/{"program": "peer_dbos", "table": "peers", /' "$ddir/peer.jsonl" |
                tee -a "$out/figures.jsonl"
            dbos_rows=yes
        fi
    fi
fi
# One row: workload, the figure of peer $peer, ours, ours / the peer's (ratio of figures of
# this run).
peer_row() { # peer_row LABEL PEER_ROW PEER_COLUMN PEER_UNIT OUR_PROGRAM OUR_ROW OUR_COLUMN OUR_UNIT [inverse]
    theirs=$(fig "$peer" "$2" "$3" "$4")
    ours=$(fig "$5" "$6" "$7" "$8")
    awk -v l="$1" -v t="$theirs" -v o="$ours" -v inv="$9" -v u="$4" 'BEGIN {
        if (t == "" || o == "") { printf "| %s | %s | %s | - | %s |\n", l, t, o, u; exit }
        if (inv) { o = 1e6 / o }
        r = u == "us" ? t / o : o / t
        printf "| %s | %.4g | %.4g | %.0fx | %s |\n", l, t, o, r, u }'
}

# ---- the report -------------------------------------------------------------------------------
report="$out/REPORT.md"
{
    echo "# wfbridge benchmark report"
    echo
    echo "Generated by \`make bench\` (scripts/bench.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'), mode: $mode."
    echo "Machine: $(nproc 2>/dev/null || echo '?') cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1),"
    echo "load average at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
    echo "(a load above the core count means the machine was shared with other work: wall rates"
    echo "and single figures are then noisy; ratios of the same repetition much less). Each figure is the median of"
    echo "its repetitions after a warm-up, with (min–max); ratios come from figures of the same run."
    echo "The seed columns quote the WF4 performance paper (.NET 4, 2010 hardware) where it prints"
    echo "a number. Every figure is also in figures.json."
    echo
    for src in $programs; do
        name=$(basename "$src" .c)
        if [ -s "$out/sections/$name.md" ]; then
            cat "$out/sections/$name.md"
        elif [ -f "$out/sections/$name.txt" ]; then
            echo "## $name"
            echo
            echo '```'
            cat "$out/sections/$name.txt"
            echo '```'
        fi
        echo
    done
    echo "## Charts and peers"
    echo
    for t in $charts; do
        echo "![$t table]($t.svg)"
        echo
    done
    [ -n "$charts_note" ] && { echo "$charts_note"; echo; }
    if [ -n "$peer_rows" ]; then
        echo "### bpmn-engine (npm, Node.js $(node --version 2>/dev/null), one thread)"
        echo
        echo "bench/peers/bpmn/bench.mjs: the definition is parsed once and each instance gets an"
        echo "Engine from the parsed context. Ours: the same run's figures (modern runtime, empty"
        echo "Sequences as no-op tasks; the 100-task rows are bench_activation's 100 activities;"
        echo "bpmn-engine overflows its stack, RangeError, on a sequence of 400 tasks). For the cold"
        echo "row (µs) the ratio is bpmn-engine's time / ours."
        echo
        peer=peer_bpmn
        echo "| workload | bpmn-engine | wfbridge modern | speed-up of ours | unit |"
        echo "|---|---|---|---|---|"
        peer_row "sequence of 5" "sequence of 5" cpu "workflows per CPU-second" \
            bench_component "sequence of 5 (empty)" modern "workflows per CPU-second"
        peer_row "1,000 started at once" "1,000 started at once" cpu "instances per CPU-second" \
            bench_multicore 1 cpu "instances/s"
        peer_row "100-task sequence" "100-task sequence" cpu "workflows per CPU-second" \
            bench_activation 100 "warm modern" us inverse
        peer_row "100-task sequence, cold (parse + first run)" \
            "100-task sequence, cold (parse + run)" cpu us bench_activation 100 "cold modern" us
        echo
    fi
    [ -n "$peer_note" ] && { echo "$peer_note"; echo; }
    if [ -n "$dbos_rows" ]; then
        echo "### DBOS (@dbos-inc/dbos-sdk $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$ddir/node_modules/@dbos-inc/dbos-sdk/package.json" 2>/dev/null), Node.js $(node --version 2>/dev/null), PostgreSQL on a Unix socket)"
        echo
        echo "bench/peers/dbos/bench.mjs: bench_persist's 5-step workload as a DBOS workflow of five"
        echo "DBOS.runStep calls (a checkpoint in PostgreSQL after each step, plus the workflow's start"
        echo "and end), 600 instances 8 at a time, median of 3 after a warm-up; the PostgreSQL server"
        echo "bench.sh started runs beside it on the same 2 cores (the CPU rate counts node only, so"
        echo "only wall rates are compared). Ours: bench_persist's 5 steps with a Persist after each, 8"
        echo "threads, group commit, same run; synchronous_commit on against our FULL, off against"
        echo "our NORMAL."
        echo
        echo "| workload | DBOS | wfbridge modern | speed-up of ours | unit |"
        echo "|---|---|---|---|---|"
        peer=peer_dbos
        peer_row "5 steps, checkpoint each; sync commit on / FULL" \
            "synchronous_commit on" wall "instances/s" bench_persist \
            "5 steps, Persist after each (to completion), FULL" "group commit" "instances/s"
        peer_row "5 steps, checkpoint each; sync commit off / NORMAL" \
            "synchronous_commit off" wall "instances/s" bench_persist \
            "5 steps, Persist after each (to completion), NORMAL" "group commit" "instances/s"
        echo
    fi
    [ -n "$dbos_note" ] && { echo "$dbos_note"; echo; }
    echo "No peer figure in this report is made up."
    echo
    if [ -n "$failed" ]; then
        echo "## Failed"
        echo
        echo "These programs failed (their output above is partial):$failed"
        echo
    fi
    echo "Total benchmark time: $(( $(date +%s) - start )) s."
} > "$report"
{
    echo "["
    [ -f "$out/figures.jsonl" ] && sed '$!s/$/,/' "$out/figures.jsonl"
    echo "]"
} > "$out/figures.json"
if [ "$WFBENCH_QUICK" = 0 ]; then
    cp "$report" bench/REPORT.md
    cp "$out/figures.json" bench/figures.json
    for t in $charts; do
        cp "$out/$t.svg" "bench/$t.svg"
    done
fi
echo "bench: report in $report${failed:+ (failed:$failed)}"
exit $status
