/* runtime_launch — starts a runtime for bench/run_runtime.sh so that it
 * can be measured the same way whatever it is written in:
 *
 *   runtime_launch PRELOAD_SO PID_FILE RUSAGE_FILE REPORT_FILE -- COMMAND [ARG...]
 *
 * The child writes its pid to PID_FILE (where the stub reads the client's
 * CPU time at each request: stub_llm --client-pid-file), loads
 * PRELOAD_SO (bench/preload/rusage_at_exit.c: its own rusage to
 * RUSAGE_FILE at exit) and takes the wall clock as its very last act
 * before execve, so "start" is the start of the runtime's own program,
 * not of this launcher. Writes one JSON line to REPORT_FILE once COMMAND
 * has exited (stdout and stderr are the runtime's):
 *
 *   {"start_us": 1795801119570123, "end_us": 1795801120012345, "pid": 4242, "exit": 0}
 *
 * start_us and end_us (when it had exited) are CLOCK_REALTIME in
 * microseconds, the clock of the stub's "arrived_us". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The child's side: pid file, environment, then exec with the start time
 * sent up the pipe last. */
static void become(char **argv, const char *preload, const char *pid_file, const char *rusage_file, int report_fd)
{
    char tmp[4096], line[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", pid_file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) || rename(tmp, pid_file)) {
        perror("runtime_launch: pid file");
        _exit(126);
    }
    if (setenv("LD_PRELOAD", preload, 1) || setenv("AW_RUSAGE_FILE", rusage_file, 1)) {
        perror("runtime_launch: setenv");
        _exit(126);
    }
    int n = snprintf(line, sizeof line, "%lld", wall_us());
    if (write(report_fd, line, (size_t)n) != n)
        _exit(126);
    execvp(argv[0], argv);
    fprintf(stderr, "runtime_launch: %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int main(int argc, char **argv)
{
    if (argc < 7 || strcmp(argv[5], "--") != 0) {
        fprintf(stderr, "usage: runtime_launch PRELOAD_SO PID_FILE RUSAGE_FILE REPORT_FILE -- COMMAND [ARG...]\n");
        return 2;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        perror("runtime_launch: pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("runtime_launch: fork");
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        become(argv + 6, argv[1], argv[2], argv[3], fds[1]);
    }
    close(fds[1]);
    char start[32] = "";
    ssize_t n;
    size_t got = 0;
    while (got < sizeof start - 1 && (n = read(fds[0], start + got, sizeof start - 1 - got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        got += (size_t)n;
    }
    start[got] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("runtime_launch: waitpid");
            return 1;
        }
    long long end = wall_us();
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *report = fopen(argv[4], "w");
    if (!report || fprintf(report, "{\"start_us\":%s,\"end_us\":%lld,\"pid\":%ld,\"exit\":%d}\n",
                           got ? start : "null", end, (long)pid, code) < 0 || fclose(report)) {
        perror("runtime_launch: the report");
        return 1;
    }
    return 0;
}
