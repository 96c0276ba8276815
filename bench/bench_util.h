/* bench_util.h — what several benchmarks share: where their temporary files go ($TMPDIR
 * when set, else /tmp). Header-only, since scripts/bench.sh builds each bench_*.c alone. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdlib.h>

static inline const char *bench_tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

#endif
