/* Finding the command of a group, and the option loop of commands that
 * take no options: the same for every group, so written once. */
#include <string.h>

#include "cli.h"

int cli_no_options(cli_args *a, const char *help) {
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        if (cli_is_help(opt)) {
            fputs(help, stdout);
            return CLI_OK;
        }
        return cli_usage_error(a, "unknown option '%s'", opt);
    }
    return cli_args_done(a) ? CLI_USAGE : -1;
}

int cli_dispatch(const char *group, const char *help, const cli_command *cmds, size_t ncmds, int argc,
                 char **argv) {
    if (argc < 1 || cli_is_help(argv[0])) {
        /* no command is a usage error; asking for help is not */
        fputs(help, argc < 1 ? stderr : stdout);
        return argc < 1 ? CLI_USAGE : CLI_OK;
    }
    for (size_t i = 0; i < ncmds; i++) {
        if (strcmp(argv[0], cmds[i].name) != 0) continue;
        /* "json format": the name usage errors start with */
        char cmd[64];
        snprintf(cmd, sizeof cmd, "%s %s", group, cmds[i].name);
        cli_args a;
        cli_args_init(&a, argc - 1, argv + 1, cmd);
        return cmds[i].run(&a);
    }
    fprintf(stderr, "agentwire %s: unknown command '%s'\nTry 'agentwire %s --help'.\n", group, argv[0], group);
    return CLI_USAGE;
}
