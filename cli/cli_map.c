/* The whole input in memory, without copying it when it is a file: a
 * regular file (FILE, or stdin redirected from one) is mapped, so its
 * pages are the system's file cache and cost neither a copy nor fresh
 * memory; a pipe or terminal is read into a buffer. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int map_file(int fd, cli_input *in) {
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) return -1;
    size_t len = (size_t)st.st_size;
    /* MAP_POPULATE maps every page at once: no fault per page later */
    void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) return -1;
    in->map = p;
    in->map_len = len;
    in->data = p;
    in->len = len;
    return 0;
}

int cli_input_open(const char *path, cli_input *in) {
    memset(in, 0, sizeof *in);
    aw_buf_init(&in->buf, NULL);
    int from_stdin = !path || strcmp(path, "-") == 0;
    int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (fd >= 0) {
        int mapped = map_file(fd, in) == 0;
        if (!from_stdin) close(fd);
        if (mapped) return 0;
    }
    /* not a regular file (or not one that maps): read it; this also
     * reports a file that cannot be opened */
    if (cli_read_input(path, &in->buf)) return -1;
    in->data = in->buf.data;
    in->len = in->buf.len;
    return 0;
}

void cli_input_close(cli_input *in) {
    if (in->map) munmap(in->map, in->map_len);
    aw_buf_free(&in->buf);
    memset(in, 0, sizeof *in);
}
