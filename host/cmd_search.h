/* cmd_search.h - the `cxlsim search` command line (docs/search.md): options, the text report, --json and
 * --csv. Like main.c, and unlike the library modules, it prints and chooses the exit status; the work is
 * search.h's.
 *
 *     cxlsim search [EXPERIMENT] [--top N] [--rerun K] [--vary DIMS] [-j N] [--exhaustive]
 *                   [--rerun-backend NAME] [--json FILE] [--csv FILE] [--quiet] [--set KEY=VALUE ...]
 */
#ifndef CXLSIM_CMD_SEARCH_H
#define CXLSIM_CMD_SEARCH_H

#include "override.h"

/* argv[0] is "search"; full_argc/full_argv the whole command line (for the JSON's command_line); ov the
 * --set overrides, applied to the experiment before the search. Returns the exit status. */
int cmd_search(int argc, char **argv, int full_argc, char **full_argv, const override_list *ov);

#endif
