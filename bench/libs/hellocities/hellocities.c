/* hellocities.c — the activity of bench_fleet's Hello cities orchestration: `hello` returns
 * "Hello, <city>!" (malloc'd; the runtime frees it) and does no other work. Each call is
 * counted in a shared counter so the benchmark knows how many activities the host processes
 * really executed: a file of 8 bytes named by $WFBENCH_HELLO_COUNTER, mapped shared by every
 * process and incremented atomically (no counting when the variable is unset). Built into
 * $BUILD/bench/lib by scripts/bench.sh. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

char *hello(const char *city);

static uint64_t *counter; /* in the shared mapping, NULL when not counting */
static pthread_once_t counter_once = PTHREAD_ONCE_INIT;

static void counter_open(void)
{
    const char *path = getenv("WFBENCH_HELLO_COUNTER");
    if (!path || !*path)
        return;
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return;
    void *p = mmap(NULL, sizeof *counter, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
        counter = p;
}

char *hello(const char *city)
{
    pthread_once(&counter_once, counter_open);
    if (counter)
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    size_t len = strlen(city ? city : "") + sizeof "Hello, !";
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "Hello, %s!", city ? city : "");
    return out;
}
