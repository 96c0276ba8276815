/* wfbench.c — the native side of the legacy benchmark workflows (bench/bench_legacy.c): an
 * empty handler (WF3's CodeActivity with no code), a counter and a comparison, described by
 * wfbench.activities.xml. Built into $BUILD/bench/lib by scripts/bench.sh. */
#include <stdbool.h>
#include <stdint.h>

void wb_noop(void);
void wb_noop(void)
{
}

void wb_tick(int32_t *count);
void wb_tick(int32_t *count)
{
    (*count)++;
}

bool wb_below(int32_t count, int32_t limit);
bool wb_below(int32_t count, int32_t limit)
{
    return count < limit;
}
