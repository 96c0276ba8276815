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
PKGS="libffi libxml-2.0 sqlite3"
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
ORDER="bench_component bench_interop bench_activation bench_persist bench_tracking bench_multicore"
programs=""
for name in $ORDER; do
    [ -f "bench/$name.c" ] && programs="$programs bench/$name.c"
done
for src in bench/bench_*.c; do
    case " $programs " in *" $src "*) ;; *) programs="$programs $src" ;; esac
done
start=$(date +%s)
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

# ---- the report -------------------------------------------------------------------------------
report="$out/REPORT.md"
{
    echo "# wfbridge benchmark report"
    echo
    echo "Generated by \`make bench\` (scripts/bench.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'), mode: $mode."
    echo "Machine: $(nproc 2>/dev/null || echo '?') cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1),"
    echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null). Each figure is the median of"
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
    echo "Peers (bpmn-engine from npm for the in-memory workloads, DBOS on PostgreSQL for the"
    echo "durable one): not run; this suite has no peer driver yet, so there are no peer figures"
    echo "(none are made up)."
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
