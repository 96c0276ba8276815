/* wfl_status.h — the WF3 activity execution status and result (docs/semantics.md §4 "Status
 * lifecycle"), shared by the instance tree and the public executor API, with the table of
 * legal moves (wfl_status.c). */
#ifndef WFL_STATUS_H
#define WFL_STATUS_H

#include <stdbool.h>

typedef enum wfl_status {
    WFL_ST_INITIALIZED = 0,
    WFL_ST_EXECUTING = 1,
    WFL_ST_CANCELING = 2,
    WFL_ST_CLOSED = 3,
    WFL_ST_COMPENSATING = 4,
    WFL_ST_FAULTING = 5,
} wfl_status;

typedef enum wfl_result {
    WFL_RES_NONE = 0,
    WFL_RES_SUCCEEDED,
    WFL_RES_CANCELED,
    WFL_RES_COMPENSATED,
    WFL_RES_FAULTED,
    WFL_RES_UNINITIALIZED,
} wfl_result;

const char *wfl_status_name(wfl_status s); /* "Executing", ... */
const char *wfl_result_name(wfl_result r); /* "Succeeded", ... */
/* Whether WF3 allows an activity to move from `from` to `to` (Initialized -> Executing,
 * Executing -> Canceling/Closed/Faulting, Canceling -> Closed/Faulting, Closed ->
 * Compensating, Compensating -> Closed/Faulting, Faulting -> Closed). */
bool wfl_status_move_is_legal(wfl_status from, wfl_status to);

#endif
