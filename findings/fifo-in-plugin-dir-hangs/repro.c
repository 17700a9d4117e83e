/* Finding: a FIFO named bp_*.so in a plugin directory makes bp_context_create
 * block forever. The loader dlopen()s every bp_*.so it finds without checking
 * that it is a regular file; dlopen open()s the FIFO for reading, which waits
 * for a writer that never comes. DESIGN.md: "One broken file never stops the
 * others (files are checked before dlopen)".
 *
 * Build and run (from the repository root, after a build in build/):
 *   cc -o /tmp/fifo-repro findings/fifo-in-plugin-dir-hangs/repro.c -Icore/include \
 *      -Lbuild/lib -lbackplane -Wl,-rpath,$PWD/build/lib && /tmp/fifo-repro
 * Expected: "bp_context_create returned" and a rejected record for the FIFO.
 * Seen: nothing; after 5 s the alarm ends the process (exit status 142). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <backplane/backplane.h>

int main(void)
{
    char dir[] = "/tmp/bp-fifo-XXXXXX", fifo[64], ini[64];
    if (!mkdtemp(dir))
        return 2;
    snprintf(fifo, sizeof fifo, "%s/bp_fifo.so", dir);
    snprintf(ini, sizeof ini, "%s.ini", dir);
    FILE *f = fopen(ini, "w");
    if (mkfifo(fifo, 0644) != 0 || !f)
        return 2;
    fprintf(f, "[backplane]\nplugin_path = %s\n", dir);
    fclose(f);
    alarm(5);
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(ini, &ctx); /* blocks in dlopen(fifo) */
    printf("bp_context_create returned %s\n", bp_status_string(st));
    bp_context_destroy(ctx);
    return 0;
}
