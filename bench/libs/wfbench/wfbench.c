/* wfbench.c — the native side of the legacy benchmark workflows (bench_component.c,
 * bench_activation.c, bench_complex.c): an empty handler (WF3's CodeActivity with no code),
 * counters and comparisons, described by wfbench.activities.xml. Built into $BUILD/bench/lib
 * by scripts/bench.sh. */
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

void wb_reset(int32_t *value);
void wb_reset(int32_t *value)
{
    *value = 0;
}

bool wb_equal(int32_t a, int32_t b);
bool wb_equal(int32_t a, int32_t b)
{
    return a == b;
}

bool wb_even(int32_t count);
bool wb_even(int32_t count)
{
    return count % 2 == 0;
}

bool wb_mod3_0(int32_t count);
bool wb_mod3_0(int32_t count)
{
    return count % 3 == 0;
}

bool wb_mod3_1(int32_t count);
bool wb_mod3_1(int32_t count)
{
    return count % 3 == 1;
}
