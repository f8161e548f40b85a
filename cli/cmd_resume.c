/* `agentwire resume ID`: a run that was cut (killed, interrupted, failed
 * mid-turn) goes on from its last stored step, with the options it was
 * started with. The turn that was cut is asked of the model again; the
 * tools of stored steps are not run again. */
#include <string.h>

#include "cli.h"
#include "cli_run.h"

static const char resume_help[] =
    "Usage: agentwire resume [options] ID\n"
    "\n"
    "Continue the session ID's run from its last stored step: after a crash,\n"
    "a kill, an interrupt (Ctrl-C) or a failure in the middle of a turn. The\n"
    "run's own options are used (the store keeps them, never an API key); the\n"
    "turn that was cut is asked of the model again, and tools that completed\n"
    "in stored steps are not run twice. Progress on stderr, the report on\n"
    "stdout, the exit status as 'agentwire run' has it.\n"
    "\n"
    "Options:\n"
    "  --store URL               where the session is (default\n"
    "                            sqlite:$XDG_DATA_HOME/agentwire/sessions.db)\n"
    "  --model PROVIDER[:MODEL]  resume with other options: then every option of\n"
    "                            'agentwire run' given applies instead of the stored ones\n"
    "  --thread FILE, --events FILE|-, --accounting FILE, --trace FILE\n"
    "                            records of this part of the run\n"
    "  --quiet, --verbose\n";

int cli_resume(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, argc, argv, "resume");
    run_opts o;
    memset(&o, 0, sizeof o);
    o.help = resume_help;
    o.resume = true;
    int rc = cli_run_parse(&a, &o);
    if (rc >= 0)
        return rc;
    if (o.session)
        return cli_usage_error(&a, "give the session as the argument (agentwire resume ID)");
    if (!a.file)
        return cli_usage_error(&a, "which session? (agentwire resume ID; 'agentwire sessions list' shows them)");
    if (o.no_store)
        return cli_usage_error(&a, "--no-store: a session is resumed from the store");
    o.session = a.file;
    return cli_run_go(&a, &o, NULL);
}
