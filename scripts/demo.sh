#!/bin/sh
# demo.sh — `make demo`: runs every sample workflow with the freshly built wfbridge and prints
# each command exactly as it can be copied and pasted (the real binary path, quoted arguments)
# followed by its output. Each run states the exit status it expects (a sample may fault on
# purpose), and the script fails if any run differs.
BUILD=${BUILD:-build}
WFBRIDGE="$BUILD/bin/wfbridge"
LIBS="$BUILD/samples/lib"
failures=0
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

# run_sample EXPECTED_EXIT TITLE ARGS... : print the command and its output, check the exit.
run_sample()
{
    want=$1
    title=$2
    shift 2
    printf '\n== %s\n' "$title"
    show_command "$@"
    "$WFBRIDGE" "$@" 2>&1
    check_exit $? "$want"
}

# run_for_id TITLE ARGS... : like run_sample (expecting exit 0), and sets $id to the instance
# id of the --json result.
run_for_id()
{
    title=$1
    shift
    printf '\n== %s\n' "$title"
    show_command "$@"
    out=$("$WFBRIDGE" "$@" 2>&1)
    check_exit $? 0
    printf '%s\n' "$out"
    id=$(printf '%s\n' "$out" | sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' | tail -1)
}

# The modern runtime (WF4-style XAML): samples/modern/, see samples/modern/README.md.
demo_modern()
{
    dir=samples/modern
    printf '\n#### modern runtime: %s\n' "$dir"
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
    printf '\n#### legacy runtime: %s\n' "$dir"
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
    printf '\n#### durable modern instances: %s\n' "$store"
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

# Mixed workflows (modern XAML hosting legacy activities through Interop): samples/mixed/.
demo_mixed()
{
    dir=samples/mixed
    printf '\n#### mixed workflows (Interop): %s\n' "$dir"
    run_sample 0 "a legacy fault caught by a modern TryCatch" run "$dir/order_fault.xaml" \
        --arg Sku=WIDGET-7 --arg Quantity=500 --json --lib-path "$LIBS"
    run_sample 0 "Interop inside a ParallelForEach" run "$dir/batch_parallel.xaml" \
        --arg 'Records=[1, 2, 3, 4]' --arg FailAt=-1 --json --lib-path "$LIBS"
    run_sample 0 "Interop inside a Pick: the legacy answer wins" run "$dir/approval_deadline.xaml" \
        --arg Employee=bo --arg Amount=80 --arg Deadline=01:00:00 \
        --resume 'IExpenseService.Approved="eli"' --json --lib-path "$LIBS"
    run_sample 0 "... the deadline wins: the legacy activity is canceled" \
        run "$dir/approval_deadline.xaml" --arg Employee=bo --arg Amount=80 \
        --arg Deadline=00:00:00 --json --lib-path "$LIBS"
    store="$scratch/mixed.db"
    run_for_id "a waiting legacy composite, persisted while idle (--store)" \
        run "$dir/expense_approval.xaml" --arg Employee=ann --arg Amount=420.50 \
        --json --store "$store" --lib-path "$LIBS"
    run_sample 0 "... resumed in a new process by its bookmark" \
        resume --store "$store" "$id" --bookmark 'IExpenseService.Approved="dana"' --json \
        --lib-path "$LIBS"
}

demo_modern
demo_durable
demo_legacy
demo_mixed

if [ "$failures" -ne 0 ]; then
    printf '\ndemo: %s run(s) did not end as expected\n' "$failures"
    exit 1
fi
printf '\ndemo: every sample ran as expected; the stores are kept in %s\n' "$scratch"
