/* interopbench.c — the native function of the Interop benchmark (bench/bench_interop.c): a
 * plain C addition, so the benchmark measures the cost of reaching it. */
#include <stdint.h>

int32_t ib_add(int32_t a, int32_t b);

int32_t ib_add(int32_t a, int32_t b)
{
    return a + b;
}
