/* wf_random.c — random bytes and ids (see wf_random.h). */
#include "wf_random.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "wf_mem.h"

void wf_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t got = getrandom(p, len, 0);
        if (got <= 0)
            break;
        p += got;
        len -= (size_t)got;
    }
    if (len == 0)
        return;
    /* No entropy source: mix the clock, the process and an address. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t h = wf_hash_bytes(&ts, sizeof ts) ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)buf;
    for (size_t i = 0; i < len; i++) {
        if (i % 8 == 0)
            h = wf_hash_bytes(&h, sizeof h);
        p[i] = (unsigned char)(h >> (8 * (i % 8)));
    }
}

void wf_random_id(char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char bytes[WF_ID_LEN / 2];
    wf_random_bytes(bytes, sizeof bytes);
    for (size_t i = 0; i < sizeof bytes; i++) {
        out[2 * i] = hex[bytes[i] >> 4];
        out[2 * i + 1] = hex[bytes[i] & 15];
    }
    out[WF_ID_LEN] = '\0';
}
