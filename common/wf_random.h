/* wf_random.h — random bytes and instance ids from the kernel (getrandom), with a clock- and
 * address-mixed fallback when no entropy source answers. Used for instance ids and host
 * owner ids, never for secrets. */
#ifndef WF_RANDOM_H
#define WF_RANDOM_H

#include <stddef.h>

#define WF_ID_LEN 32 /* hex digits of an instance id */

void wf_random_bytes(void *buf, size_t len);
/* 16 random bytes as 32 lowercase hex digits, NUL-terminated (out has WF_ID_LEN + 1 bytes). */
void wf_random_id(char *out);

#endif
