/* `texel run` and `texel conformance` (host/run.c, host/conformance.c), and
 * the output helpers they share with host/main.c. */
#ifndef TX_HOST_CMDS_H
#define TX_HOST_CMDS_H

#include "texel.h"

int tx_cmd_run(int argc, char **argv);
int tx_cmd_conformance(int argc, char **argv);

/* host/main.c */
void tx_print_stats_json(const tx_stats *s);
void tx_print_stats_text(const tx_stats *s);
void tx_json_str(const char *s);

#endif
