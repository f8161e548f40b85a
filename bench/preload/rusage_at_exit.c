/* rusage_at_exit.so — preloaded into the runtime a benchmark measures
 * (bench/runtime_launch.c sets LD_PRELOAD): when the process exits it
 * writes its own getrusage(RUSAGE_SELF) — CPU time of all its threads and
 * its peak RSS, none of its children's — as one JSON line to the file
 * named by AW_RUSAGE_FILE:
 *
 *   {"pid": 123, "user_us": 51234, "sys_us": 20456, "maxrss_kb": 7312}
 *
 * The same shim for agentwire and for Node, so both are measured the same
 * way. Its two variables are taken out of the environment at load, before
 * main, so the processes the runtime starts (the tools) neither load the
 * shim nor overwrite the report; a forked child that exits without exec
 * writes nothing either (the pid is checked). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char report_path[4096];
static pid_t measured_pid;

__attribute__((constructor)) static void take_the_report_path(void)
{
    const char *path = getenv("AW_RUSAGE_FILE");
    if (path && strlen(path) < sizeof report_path) {
        strcpy(report_path, path);
        measured_pid = getpid();
    }
    unsetenv("AW_RUSAGE_FILE");
    unsetenv("LD_PRELOAD");
}

__attribute__((destructor)) static void write_the_report(void)
{
    if (!report_path[0] || getpid() != measured_pid)
        return;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru))
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "{\"pid\":%ld,\"user_us\":%lld,\"sys_us\":%lld,\"maxrss_kb\":%ld}\n",
                     (long)measured_pid, (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
                     (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    int fd = open(report_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        report_path[0] = '\0';
    close(fd);
}
