/* wfl_exec_position.c — where an idle legacy instance is (wfl_exec.h "Position"): its
 * executing activities, loop clones included, and every pending timer; read by
 * `wfbridge migrate-instances` to find the matching point of the converted definition. */
#include "wfl_exec_int.h"

#include <stdlib.h>

static void each_executing(wfl_act *act, wfl_name_fn fn, void *ud)
{
    if (wfl_act_status(act) != WFL_ST_EXECUTING)
        return;
    fn(ud, wfl_act_name(act));
    for (size_t i = 0, n = wfl_act_child_count(act); i < n; i++) {
        wfl_act *c = wfl_act_child(act, i);
        if (c)
            each_executing(c, fn, ud);
    }
    for (size_t i = 0, n = wfl_act_context_count(act); i < n; i++)
        each_executing(wfl_act_context_at(act, i), fn, ud);
}

void wfl_exec_each_executing(wfl_exec *ex, wfl_name_fn fn, void *ud)
{
    if (ex->root)
        each_executing(ex->root, fn, ud);
}

static int due_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

size_t wfl_exec_timers(const wfl_exec *ex, int64_t *due, size_t max)
{
    size_t n = ex->timer_count;
    for (size_t i = 0; i < n && i < max; i++)
        due[i] = ex->timers[i].due_us;
    if (n <= max)
        qsort(due, n, sizeof *due, due_cmp);
    return n;
}
