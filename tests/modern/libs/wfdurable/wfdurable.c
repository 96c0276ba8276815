/* wfdurable.c — native test library for the durable host (tests/modern/test_durable.c,
 * test_crash.c): wfd_step appends one "S TAG STEP" line per call to the file named by
 * $WFD_LOG with a single O_APPEND write, so a killed process never leaves half a line and
 * the crash harness can count exactly which steps ran and how often. wfd_poison kills its
 * own process when TAG is the value of $WFD_POISON (a native call that crashes the host). */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wfd_step(const char *tag, int32_t step);
void wfd_poison(const char *tag);
int32_t wfd_calls(void);

static int32_t calls;

void wfd_step(const char *tag, int32_t step)
{
    calls++;
    const char *path = getenv("WFD_LOG");
    if (!path || !*path)
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "S %s %d\n", tag ? tag : "-", (int)step);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}

/* Calls made in this process (for in-process tests). */
int32_t wfd_calls(void)
{
    return calls;
}

/* A poisoned instance: SIGKILL (no core file, no cleanup), as a crash in native code. */
void wfd_poison(const char *tag)
{
    const char *poison = getenv("WFD_POISON");
    if (tag && poison && *poison && strcmp(tag, poison) == 0)
        raise(SIGKILL);
}
