/* The CLI's shared output (host/report.c), used by every texel command. */
#ifndef TX_HOST_REPORT_H
#define TX_HOST_REPORT_H

#include "texel.h"

/* The stats as JSON members (no braces), to go inside an object. */
void tx_print_stats_json(const tx_stats *s);
/* The stats as two lines of text. */
void tx_print_stats_text(const tx_stats *s);
/* Compile cost per program family (tx_ctx_compile_families): a JSON member
 * "compile_families": {...} without a trailing comma, or one text line. */
void tx_print_families_json(const tx_ctx *ctx);
void tx_print_families_text(const tx_ctx *ctx);
/* s as a JSON string, quoted and escaped. */
void tx_json_str(const char *s);

#endif
