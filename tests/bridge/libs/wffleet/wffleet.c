/* wffleet.c — native test library for the multi-host fleet test (tests/bridge/test_fleet.c):
 * wff_tag gives each instance a unique tag (32 random hex digits, made before its first
 * persist point), and wff_step appends "S TAG STEP PID" to the file named by $WFF_LOG with
 * one O_APPEND write, so a SIGKILLed host never leaves half a line and the test can tell
 * which process made which call. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

char *wff_tag(void);
void wff_step(const char *tag, int32_t step);

/* The caller (the engine) frees the string with free(). NULL when no randomness is had. */
char *wff_tag(void)
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return NULL;
    char *tag = malloc(2 * sizeof r + 1);
    if (!tag)
        return NULL;
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(tag + 2 * i, 3, "%02x", r[i]);
    return tag;
}

void wff_step(const char *tag, int32_t step)
{
    const char *path = getenv("WFF_LOG");
    if (!path || !*path)
        return;
    char line[256];
    int n =
        snprintf(line, sizeof line, "S %s %d %ld\n", tag ? tag : "-", (int)step, (long)getpid());
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}
