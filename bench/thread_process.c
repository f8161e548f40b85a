/* thread_process: one whole process of the thread benchmark, timed and
 * weighed as a user would see it.
 *
 *   thread_process OUT_FILE PROGRAM [ARG...]
 *
 * Runs PROGRAM with its standard output sent to OUT_FILE (created or
 * truncated), waits for it and prints "seconds peak_rss_kb": the wall time
 * from fork to exit and the largest resident set of the process (getrusage
 * through wait4, so no /usr/bin/time is needed). Exits 1 when PROGRAM
 * fails. bench/run_thread.sh runs `agentwire thread encode FILE` and the
 * JavaScript peer's whole-process mode through it, bench/run_messages.sh
 * `agentwire messages encode FILE` and its peer. */
#define _DEFAULT_SOURCE /* wait4 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: thread_process OUT_FILE PROGRAM [ARG...]\n");
        return 2;
    }
    int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) {
        perror(argv[1]);
        return 1;
    }
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        if (dup2(out, STDOUT_FILENO) < 0) _exit(127);
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    close(out);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("wait4");
        return 1;
    }
    double t = now() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "thread_process: %s failed (status %d)\n", argv[2], status);
        return 1;
    }
    printf("%.6f %ld\n", t, ru.ru_maxrss);
    return 0;
}
