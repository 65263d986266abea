/* The texel commands that live outside host/main.c, which dispatches to them. */
#ifndef TX_HOST_CMDS_H
#define TX_HOST_CMDS_H

int tx_cmd_bench(int argc, char **argv);       /* host/bench.c */
int tx_cmd_run(int argc, char **argv);         /* host/run.c */
int tx_cmd_conformance(int argc, char **argv); /* host/conformance.c */
/* Their usage text ("usage: texel CMD ...\n", more lines indented). */
extern const char tx_usage_bench[], tx_usage_run[], tx_usage_conformance[], tx_usage_train[];
int tx_cmd_train(int argc, char **argv);       /* host/train.c */

#endif
