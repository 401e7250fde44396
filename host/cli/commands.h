/* commands.h - the commands of cxlsim, one table row each (cli.h); main.c lists them in the order
 * `cxlsim help` shows. A new command: a file cmd_NAME.c defining `const cli_command cmd_NAME` (its
 * option table, summary and handler), its declaration here, and its row in main.c's table. */
#ifndef CXLSIM_COMMANDS_H
#define CXLSIM_COMMANDS_H

#include "cli/cli.h"

extern const cli_command cmd_probe;    /* cmd_probe.c */
extern const cli_command cmd_memory;   /* cmd_experiment.c */
extern const cli_command cmd_train;    /* cmd_train.c */
extern const cli_command cmd_ops;      /* cmd_experiment.c */
extern const cli_command cmd_presets;  /* cmd_presets.c */
extern const cli_command cmd_check;    /* cmd_presets.c */
extern const cli_command cmd_compare;  /* cmd_compare.c */
extern const cli_command cmd_sweep;    /* cmd_sweep.c */
extern const cli_command cmd_search;   /* cmd_search.c */
extern const cli_command cmd_backends; /* cmd_info.c */
extern const cli_command cmd_version;  /* cmd_info.c */
extern const cli_command cmd_help;     /* cmd_info.c */

#endif
