/* wfl_status.c — names of the WF3 activity execution statuses and results, and the one
 * legality check every status move goes through (docs/semantics.md §4 "Status lifecycle").
 * The moves themselves, and the function making each, are tabled at the top of wfl_exec.c;
 * wfl__set_status there asserts wfl_status_move_is_legal before it changes anything. */
#include "wfl_status.h"

/* WF3's ActivityExecutionStatus moves, as its ActivityExecutionContext requests them:
 *
 *   from \ to      Initialized Executing Canceling Closed Compensating Faulting
 *   Initialized         .          x         .        .         .          .
 *   Executing           .          .         x        x         .          x
 *   Canceling           .          .         .        x         .          x
 *   Closed              .          .         .        .         x          .
 *   Compensating        .          .         .        x         .          x
 *   Faulting            .          .         .        x         .          .
 */
static const unsigned char legal[6][6] = {
    [WFL_ST_INITIALIZED] = {[WFL_ST_EXECUTING] = 1},
    [WFL_ST_EXECUTING] = {[WFL_ST_CANCELING] = 1, [WFL_ST_CLOSED] = 1, [WFL_ST_FAULTING] = 1},
    [WFL_ST_CANCELING] = {[WFL_ST_CLOSED] = 1, [WFL_ST_FAULTING] = 1},
    [WFL_ST_CLOSED] = {[WFL_ST_COMPENSATING] = 1},
    [WFL_ST_COMPENSATING] = {[WFL_ST_CLOSED] = 1, [WFL_ST_FAULTING] = 1},
    [WFL_ST_FAULTING] = {[WFL_ST_CLOSED] = 1},
};

bool wfl_status_move_is_legal(wfl_status from, wfl_status to)
{
    return (unsigned)from < 6 && (unsigned)to < 6 && legal[from][to] != 0;
}

const char *wfl_status_name(wfl_status s)
{
    static const char *const names[] = {"Initialized", "Executing", "Canceling", "Closed",
                                        "Compensating", "Faulting"};
    return (unsigned)s < 6 ? names[s] : "?";
}

const char *wfl_result_name(wfl_result r)
{
    static const char *const names[] = {"None", "Succeeded", "Canceled", "Compensated",
                                        "Faulted", "Uninitialized"};
    return (unsigned)r < 6 ? names[r] : "?";
}
