#!/bin/sh
# demo.sh — `make demo`: the whole migration job with the freshly built wfbridge: convert every
# legacy sample (JSON and HTML report in build/demo/), run the converted and the mixed
# workflows with the SQLite store, drain 500 instances with two hosts on one store, serve a
# converted WF 3.5 workflow service to its SOAP client, verify each legacy sample side by side
# with generated inputs, then the sample runs of each runtime. Each command is printed exactly
# as it can be pasted (the real binary path, quoted arguments), followed by one line of its
# result. Each run states the exit status it expects (a sample may fault on purpose), and the
# script fails if any run differs. It ends with a one-screen summary.
BUILD=${BUILD:-build}
WFBRIDGE="$BUILD/bin/wfbridge"
LIBS="$BUILD/samples/lib"
failures=0
runs=0
# Stores of the durable demos live in $BUILD/demo, emptied at the start and kept afterwards, so
# the printed commands still work when pasted (e.g. `instances --store build/demo/instances.db`).
scratch="$BUILD/demo"
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1

# quote WORD: WORD as the shell reads it back, single-quoted unless it is plainly safe.
quote()
{
    case $1 in
    '' | *[!A-Za-z0-9_./:@%+-]*)
        printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
    *)
        printf '%s' "$1" ;;
    esac
}

# show_command ARGS...: print "$ WFBRIDGE ARGS..." ready to paste into a shell.
show_command()
{
    printf '$ %s' "$(quote "$WFBRIDGE")"
    for word in "$@"; do
        printf ' %s' "$(quote "$word")"
    done
    printf '\n'
}

# check_exit GOT WANT: count a run that did not end as expected.
check_exit()
{
    if [ "$1" -ne "$2" ]; then
        printf '!! exit status %s, expected %s\n' "$1" "$2"
        failures=$((failures + 1))
    fi
}

# brief TEXT: its first error line (if any) and its last line, each cut to one screen line.
brief()
{
    printf '%s\n' "$1" | grep -m1 ': error: ' | cut -c1-118 | sed 's/^/   /'
    last=$(printf '%s\n' "$1" | tail -n 1)
    if [ ${#last} -gt 115 ]; then
        printf '   %s...\n' "$(printf '%s' "$last" | cut -c1-112)"
    else
        printf '   %s\n' "$last"
    fi
}

# run_sample EXPECTED_EXIT TITLE ARGS... : print the title, the command and one line of its
# result; all of its output when the exit status is not the expected one.
run_sample()
{
    want=$1
    title=$2
    shift 2
    printf -- '-- %s\n' "$title"
    show_command "$@"
    out=$("$WFBRIDGE" "$@" 2>&1)
    got=$?
    if [ "$got" -ne "$want" ]; then
        printf '%s\n' "$out"
    else
        brief "$out"
    fi
    check_exit "$got" "$want"
    runs=$((runs + 1))
}

# run_for_id TITLE ARGS... : like run_sample (expecting exit 0), and sets $id to the instance
# id of the --json result.
run_for_id()
{
    run_sample 0 "$@"
    id=$(printf '%s\n' "$out" | sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' | tail -1)
}

# The modern runtime (WF4-style XAML): samples/modern/, see samples/modern/README.md.
demo_modern()
{
    dir=samples/modern
    printf '\n## modern runtime: %s\n' "$dir"
    run_sample 0 "arguments in and out" run "$dir/hello.xaml" \
        --arg Name=World --arg Times=2 --json --lib-path "$LIBS"
    run_sample 0 "While and ForEach with a running total" run "$dir/running_total.xaml" \
        --arg 'Prices=[3, 4, 5]' --arg Rounds=3 --json --lib-path "$LIBS"
    run_sample 0 "a Flowchart with a loop and decisions" run "$dir/flowchart.xaml" \
        --arg 'Scores=[72, 35, 90, 50]' --json --lib-path "$LIBS"
    run_sample 0 "a state machine goes idle on its bookmarks" run "$dir/order_state_machine.xaml" \
        --arg OrderId=A-17 --arg Amount=120.50 --json --lib-path "$LIBS"
    run_sample 0 "... and --resume moves it on" run "$dir/order_state_machine.xaml" \
        --arg OrderId=A-17 --arg Amount=120.50 --resume pay=120.50 --resume ship=TRK-9 \
        --json --lib-path "$LIBS"
    run_sample 0 "compensable bookings are confirmed on success" run "$dir/compensation.xaml" \
        --arg Budget=1000 --arg HotelPrice=400 --arg FlightPrice=350.25 --json --lib-path "$LIBS"
    run_sample 1 "a fault after them compensates, newest first" run "$dir/compensation.xaml" \
        --arg Budget=500 --arg HotelPrice=400 --arg FlightPrice=350.25 --json --lib-path "$LIBS"
    run_sample 0 "InvokeMethod calls a plain C library" run "$dir/invoke_native.xaml" \
        --arg A=1984 --arg B=48 --json --lib-path "$LIBS"
}

# The legacy runtime (WF3-style XOML run unchanged): samples/legacy/, see its README.md.
demo_legacy()
{
    dir=samples/legacy
    printf '\n## legacy runtime: %s\n' "$dir"
    order="$dir/order_processing/order_processing.xoml"
    run_sample 0 "order processing: custom activities, .rules conditions, a policy" \
        run-legacy "$order" --arg OrderId=SO-1001 --arg Sku=WIDGET-7 --arg UnitPrice=75.50 \
        --arg Quantity=3 --json --lib-path "$LIBS"
    run_sample 0 "... a large order gets a discount and a manager review" \
        run-legacy "$order" --arg OrderId=SO-1002 --arg Sku=WIDGET-7 --arg UnitPrice=75.50 \
        --arg Quantity=20 --json --lib-path "$LIBS"
    run_sample 1 "... ReserveStock's non-zero status terminates the instance" \
        run-legacy "$order" --arg OrderId=SO-1003 --arg Sku=WIDGET-7 --arg UnitPrice=75.50 \
        --arg Quantity=500 --json --lib-path "$LIBS"
    expense="$dir/expense_approval/expense_approval.xoml"
    run_sample 0 "expense approval: a state machine approved by an event" \
        run-legacy "$expense" --arg Employee=dana --arg Amount=420.00 --event Approved=alice \
        --json --lib-path "$LIBS"
    run_sample 0 "... no answer: the Delay escalates, Idle waiting on Approved" \
        run-legacy "$expense" --arg Employee=dana --arg Amount=420.00 --json --lib-path "$LIBS"
    store="$scratch/legacy.db"
    run_for_id "... persisted while idle (--store), then resumed by instance id" \
        run-legacy "$expense" --arg Employee=erin --arg Amount=99.90 --json \
        --store "$store" --lib-path "$LIBS"
    run_sample 0 "... resumed: Rejected delivered to instance $id" \
        run-legacy "$expense" --store "$store" --instance "$id" \
        --event 'Rejected={"Approver":"bob","Comment":"no receipts"}' --json --lib-path "$LIBS"
    review="$dir/document_review/document_review.xoml"
    run_sample 0 "document review: a parallel Replicator over the reviewers" \
        run-legacy "$review" --arg 'Document=Supplier contract' \
        --arg 'Reviewers=["ana", "ben", "legal-team"]' --json --lib-path "$LIBS"
    batch="$dir/batch_processing/batch_processing.xoml"
    run_sample 0 "batch processing: a While loop with per-iteration state" \
        run-legacy "$batch" --arg BatchSize=4 --json --lib-path "$LIBS"
    run_sample 0 "... a failing record: FaultHandlers, iterations compensated newest first" \
        run-legacy "$batch" --arg BatchSize=4 --arg FailAt=3 --json --lib-path "$LIBS"
}

# Durable modern instances: the state machine waits on its "pay" and "cancel" bookmarks, so a
# run with --store persists it and exits; other processes list, inspect and resume it.
demo_durable()
{
    dir=samples/modern
    store="$scratch/instances.db"
    printf '\n## durable modern instances: %s\n' "$store"
    run_for_id "run --store: the instance goes idle on its bookmarks, is persisted and unloaded" \
        run "$dir/order_state_machine.xaml" --arg OrderId=A-17 --arg Amount=120.50 \
        --store "$store" --promote OrderId --json --lib-path "$LIBS"
    run_sample 0 "instances: what the store holds" instances --store "$store"
    run_sample 0 "... found by a promoted property" instances --store "$store" \
        --where OrderId=A-17 --json
    run_sample 0 "inspect: the store row and the decoded state (nothing changes)" \
        inspect --store "$store" "$id"
    run_sample 0 "resume: pay, then it waits to be shipped" \
        resume --store "$store" "$id" --bookmark pay=120.50 --json --lib-path "$LIBS"
    run_sample 0 "resume: ship, and it completes" \
        resume --store "$store" "$id" --bookmark ship=TRK-9 --json --lib-path "$LIBS"
    run_sample 0 "instances: now Closed" instances --store "$store" --status Closed
}

# Mixed workflows (modern XAML hosting legacy activities through Interop): samples/mixed/, each
# run durable with the SQLite store.
demo_mixed()
{
    dir=samples/mixed
    store="$scratch/mixed.db"
    printf '\n## mixed workflows (Interop), durable in %s\n' "$store"
    run_sample 0 "a legacy fault caught by a modern TryCatch" run "$dir/order_fault.xaml" \
        --arg Sku=WIDGET-7 --arg Quantity=500 --json --store "$store" --lib-path "$LIBS"
    run_sample 0 "Interop inside a ParallelForEach" run "$dir/batch_parallel.xaml" \
        --arg 'Records=[1, 2, 3, 4]' --arg FailAt=-1 --json --store "$store" --lib-path "$LIBS"
    run_sample 0 "Interop inside a Pick: the legacy answer wins" run "$dir/approval_deadline.xaml" \
        --arg Employee=bo --arg Amount=80 --arg Deadline=01:00:00 \
        --resume 'IExpenseService.Approved="eli"' --json --lib-path "$LIBS"
    run_sample 0 "... the deadline wins: the legacy activity is canceled" \
        run "$dir/approval_deadline.xaml" --arg Employee=bo --arg Amount=80 \
        --arg Deadline=00:00:00 --json --lib-path "$LIBS"
    run_for_id "a waiting legacy composite, persisted while idle" \
        run "$dir/expense_approval.xaml" --arg Employee=ann --arg Amount=420.50 \
        --json --store "$store" --lib-path "$LIBS"
    run_sample 0 "... resumed in a new process by its bookmark" \
        resume --store "$store" "$id" --bookmark 'IExpenseService.Approved="dana"' --json \
        --lib-path "$LIBS"
}

# A fleet in miniature: `start` makes 500 runnable instances of a mixed workflow without running
# them, two `host --once` processes drain the store side by side (each claims batches of
# instances and runs them on its worker pool; none may run twice), and the store shows every
# instance Closed.
demo_fleet()
{
    store="$scratch/fleet.db"
    wf=samples/mixed/order_fault.xaml
    printf '\n## a fleet of hosts on one store: %s\n' "$store"
    run_sample 0 "start: 500 runnable instances, none run yet" start "$wf" --count 500 \
        --arg Sku=WIDGET-7 --arg Quantity=5 --store "$store" --json --lib-path "$LIBS"
    printf -- '-- two hosts drain it side by side (each prints "ID STATUS" per instance it ran)\n'
    for n in 1 2; do
        show_command host --store "$store" --once --lib-path "$LIBS"
    done
    "$WFBRIDGE" host --store "$store" --once --lib-path "$LIBS" >"$scratch/fleet-1.out" 2>&1 &
    host1=$!
    "$WFBRIDGE" host --store "$store" --once --lib-path "$LIBS" >"$scratch/fleet-2.out" 2>&1 &
    host2=$!
    wait "$host1"
    check_exit $? 0
    wait "$host2"
    check_exit $? 0
    runs=$((runs + 2))
    ran1=$(grep -c ' Closed$' "$scratch/fleet-1.out")
    ran2=$(grep -c ' Closed$' "$scratch/fleet-2.out")
    twice=$(cat "$scratch/fleet-1.out" "$scratch/fleet-2.out" | grep ' Closed$' | cut -d' ' -f1 |
        sort | uniq -d | wc -l)
    fleet_summary="500 instances, host 1 ran $ran1, host 2 ran $ran2, run twice: $twice"
    printf '   %s (%s, %s)\n' "$fleet_summary" "$scratch/fleet-1.out" "$scratch/fleet-2.out"
    if [ $((ran1 + ran2)) -ne 500 ] || [ "$twice" -ne 0 ]; then
        printf '!! expected the 500 instances run once each\n'
        failures=$((failures + 1))
    fi
    run_sample 0 "instances: every one Closed" instances --store "$store" --status Closed --json
}

# A WF 3.5 workflow service (samples/services/, see its README.md): converted, served with a
# store on a free port of 127.0.0.1, driven by its SOAP client (python3-zeep, the instance
# context in its session's WscContext cookie), then stopped with SIGTERM.
demo_services()
{
    printf '\n## a workflow service: samples/services/calculator.xoml, served and called\n'
    mkdir -p "$scratch/services"
    run_sample 0 "convert: ReceiveActivity -> Receive/SendReply" convert \
        samples/services/calculator.xoml -o "$scratch/services/calculator.xaml" --lib-path "$LIBS"
    show_command serve "$scratch/services/calculator.xaml" --listen 127.0.0.1:0 \
        --store "$scratch/services.db" --lib-path "$LIBS"
    "$WFBRIDGE" serve "$scratch/services/calculator.xaml" --listen 127.0.0.1:0 \
        --store "$scratch/services.db" --lib-path "$LIBS" >"$scratch/serve.out" 2>&1 &
    serve=$!
    url=""
    tries=0
    while [ -z "$url" ] && [ $tries -lt 500 ] && kill -0 "$serve" 2>/dev/null; do
        url=$(sed -n 's/^listening: //p' "$scratch/serve.out")
        [ -n "$url" ] || sleep 0.02
        tries=$((tries + 1))
    done
    printf '   listening: %s\n' "${url:-(none)}"
    printf '$ samples/services/calculator_client.py %s\n' "$url"
    client=$(/usr/bin/python3 samples/services/calculator_client.py "$url" 2>&1)
    check_exit $? 0
    runs=$((runs + 2))
    printf '%s\n' "$client" | sed 's/^/   /'
    # a WF 3.5 client of the service: its SendActivities, converted to Send/ReceiveReply, call
    # the served calculator at the address its endpoint file gives (docs/formats.md)
    run_sample 0 "convert: SendActivity -> Send/ReceiveReply" convert \
        samples/services/calculator_batch.xoml -o "$scratch/services/calculator_batch.xaml" \
        --lib-path "$LIBS"
    printf '{"endpoints": {"CalculatorEndpoint": {"address": "%s"}}}\n' "$url" \
        >"$scratch/services/calculator_batch.endpoints.json"
    printf '$ cat %s\n   %s\n' "$scratch/services/calculator_batch.endpoints.json" \
        "$(cat "$scratch/services/calculator_batch.endpoints.json")"
    run_sample 0 "run: PowerOn, Add(7), Multiply(7), PowerOff through Send" run \
        "$scratch/services/calculator_batch.xaml" --lib-path "$LIBS" --arg Amount=7 --json
    if ! printf '%s\n' "$out" | grep -q '"Result": 49'; then
        printf '!! expected the batch client to end at 49\n'
        failures=$((failures + 1))
    fi
    kill -TERM "$serve" 2>/dev/null
    wait "$serve"
    check_exit $? 0
    if [ "$(printf '%s\n' "$client" | tail -n 1)" != "PowerOff -> 6" ]; then
        printf '!! expected the calculator to end at 6\n'
        failures=$((failures + 1))
    fi
    run_sample 0 "instances: the calculator's instance Closed" instances \
        --store "$scratch/services.db" --status Closed
}

# Convert every legacy sample: XAML (and the files a partial conversion generates) into
# $converted, the migration report as JSON and HTML.
demo_convert()
{
    printf '\n## convert every legacy sample: samples/legacy -> %s\n' "$converted"
    printf -- '-- the migration (warnings name what goes through Interop: see the report)\n'
    show_command convert samples/legacy -o "$converted" --report "$scratch/report.json" \
        --html "$scratch/report.html" --lib-path "$LIBS"
    out=$("$WFBRIDGE" convert samples/legacy -o "$converted" --report "$scratch/report.json" \
        --html "$scratch/report.html" --lib-path "$LIBS" 2>"$scratch/convert.log")
    check_exit $? 0
    runs=$((runs + 1))
    conv_summary=$(grep '^converted [0-9]' "$scratch/convert.log" | tail -n 1)
    printf '   %s (%s warnings in %s)\n' "$conv_summary" \
        "$(grep -c ': warning: ' "$scratch/convert.log")" "$scratch/convert.log"
}

# Run the converted workflows, durable with the SQLite store; each conversion's directory comes
# first on the library path (a partial conversion's generated files are there).
demo_converted()
{
    store="$scratch/converted.db"
    printf '\n## the converted workflows, durable in %s\n' "$store"
    c="$converted/order_processing"
    run_sample 0 "order processing, converted" run "$c/order_processing.xaml" \
        --arg OrderId=SO-1001 --arg Sku=WIDGET-7 --arg UnitPrice=75.50 --arg Quantity=3 \
        --json --store "$store" --lib-path "$c:$LIBS"
    c="$converted/document_review"
    run_sample 0 "document review, converted (the Replicator runs through Interop)" \
        run "$c/document_review.xaml" --arg 'Document=Supplier contract' \
        --arg 'Reviewers=["ana", "ben", "legal-team"]' --json --store "$store" \
        --lib-path "$c:$LIBS"
    c="$converted/batch_processing"
    run_sample 0 "batch processing, converted: a failing record, compensated" \
        run "$c/batch_processing.xaml" --arg BatchSize=4 --arg FailAt=3 --json \
        --store "$store" --lib-path "$c:$LIBS"
    c="$converted/expense_approval"
    run_for_id "expense approval, converted: idle on its events, persisted" \
        run "$c/expense_approval.xaml" --arg Employee=dana --arg Amount=420.00 --json \
        --store "$store" --lib-path "$c:$LIBS"
    run_sample 0 "... resumed in a new process: approved" \
        resume --store "$store" "$id" --bookmark 'IExpenseService.Approved="alice"' --json \
        --lib-path "$c:$LIBS"
}

# Verify every legacy sample side by side (legacy, converted, interop) with generated inputs;
# expense_approval is driven by the expense_approval.events.json beside it.
demo_verify()
{
    printf '\n## verify every legacy sample side by side, %s generated cases each\n' "$VERIFY_CASES"
    printf -- '-- legacy vs converted vs all custom activities through Interop\n'
    show_command verify samples/legacy --lib-path "$LIBS" --generate "$VERIFY_CASES" --seed 1 \
        --junit "$scratch/verify.xml" --json
    out=$("$WFBRIDGE" verify samples/legacy --lib-path "$LIBS" --generate "$VERIFY_CASES" \
        --seed 1 --junit "$scratch/verify.xml" --json 2>"$scratch/verify.txt")
    check_exit $? 0
    runs=$((runs + 1))
    grep -v '^    ' "$scratch/verify.txt" | sed 's/^/   /'
    verify_cases=$(printf '%s\n' "$out" | tail -n 1 | sed -n 's/^{"status": "[a-z]*", "cases": \([0-9]*\).*/\1/p')
    verify_div=$(grep -o 'failures="[0-9]*"' "$scratch/verify.xml" | tr -dc '0-9\n' |
        awk '{ n += $1 } END { print n + 0 }')
}

start=$(date +%s)
converted="$scratch/converted"
VERIFY_CASES=${VERIFY_CASES:-100}
conv_summary="(not run)"
verify_cases=0
verify_div=0
fleet_summary="(not run)"
demo_convert
demo_converted
demo_mixed
demo_fleet
demo_services
demo_verify
demo_modern
demo_durable
demo_legacy
elapsed=$(($(date +%s) - start))

printf '\n==================================== summary ====================================\n'
printf ' conversion:  %s (samples/legacy -> %s)\n' "$conv_summary" "$converted"
printf ' report:      %s (and %s)\n' "$scratch/report.html" "$scratch/report.json"
printf ' verify:      %s cases, each legacy vs converted vs interop: %s divergences (%s)\n' \
    "$verify_cases" "$verify_div" "$scratch/verify.xml"
printf ' fleet:       %s\n' "$fleet_summary"
printf ' runs:        %s commands, %s not as expected; stores kept in %s\n' "$runs" "$failures" \
    "$scratch"
printf ' time:        %ss\n' "$elapsed"
if [ "$failures" -ne 0 ] || [ "$verify_div" -ne 0 ]; then
    printf 'demo: FAILED\n'
    exit 1
fi
printf 'demo: the whole job ran as expected\n'
