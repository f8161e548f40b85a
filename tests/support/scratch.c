/* The tests' scratch directory (scratch.h). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "scratch.h"

static char dir[256];

int aw_test_scratch_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/aw-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

int aw_test_scratch_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

const char *aw_test_scratch_dir(void) { return dir; }

const char *aw_test_scratch_path(const char *name)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

void aw_test_scratch_write(const char *name, const char *text)
{
    FILE *f = fopen(aw_test_scratch_path(name), "w");
    if (!f)
        fail_msg("cannot write %s", aw_test_scratch_path(name));
    fputs(text, f);
    fclose(f);
}
