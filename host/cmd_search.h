/* cmd_search.h - the `cxlsim search` command line (docs/search.md): options, the text report, --json and
 * --csv. Like main.c, and unlike the library modules, it prints (the report, the progress line); errors
 * go back to main.c, which prints them and chooses the exit status. The work is search.h's.
 *
 *     cxlsim search [EXPERIMENT] [--top N] [--rerun K] [--vary DIMS] [-j N] [--exhaustive]
 *                   [--rerun-backend NAME] [--json FILE] [--csv FILE] [--quiet] [--set KEY=VALUE ...]
 */
#ifndef CXLSIM_CMD_SEARCH_H
#define CXLSIM_CMD_SEARCH_H

#include "err.h"
#include "override.h"

/* argv[0] is "search"; full_argc/full_argv the whole command line (for the JSON's command_line); ov the
 * --set overrides, applied to the experiment before the search. Returns 0, or a CXL_E* code with err
 * filled: CXL_EUSAGE for a bad option (the message names it), else the search's or the outputs' error
 * (the exclusions of a search with no valid layout are printed before it returns CXL_ECONFIG). */
int cmd_search(int argc, char **argv, int full_argc, char **full_argv, const override_list *ov, cxl_err *err);

#endif
