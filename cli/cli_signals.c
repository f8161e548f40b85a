/* SIGINT and SIGTERM, caught the one way the command catches them. */
#include <signal.h>
#include <string.h>

#include "cli.h"

void cli_catch_stop_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    /* The loop wakes through the handler's pipe; any other call restarts,
     * so a first signal never turns into a failed write (of the report,
     * say): a process stuck in one is what the second signal is for. */
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
