/* The CLI's shared output: run statistics as JSON or text, JSON strings. */
#include <stdio.h>

#include "report.h"

void tx_print_stats_json(const tx_stats *s) {
    printf("\"generic_compiles\": %llu, \"specialized_compiles\": %llu, "
           "\"specialized_ready\": %llu, \"compile_failures\": %llu, \"cache_hits\": %llu, "
           "\"generic_runs\": %llu, \"specialized_runs\": %llu, \"draws\": %llu, "
           "\"bytes_uploaded\": %llu, \"bytes_downloaded\": %llu, "
           "\"live_texture_bytes\": %llu, \"pooled_texture_bytes\": %llu, "
           "\"peak_texture_bytes\": %llu, \"compile_ms\": %.3f",
           (unsigned long long)s->generic_compiles, (unsigned long long)s->specialized_compiles,
           (unsigned long long)s->specialized_ready, (unsigned long long)s->compile_failures,
           (unsigned long long)s->cache_hits, (unsigned long long)s->generic_runs,
           (unsigned long long)s->specialized_runs, (unsigned long long)s->draws,
           (unsigned long long)s->bytes_uploaded, (unsigned long long)s->bytes_downloaded,
           (unsigned long long)s->live_texture_bytes, (unsigned long long)s->pooled_texture_bytes,
           (unsigned long long)s->peak_texture_bytes, s->compile_ms);
}

void tx_print_stats_text(const tx_stats *s) {
    printf("programs: %llu generic, %llu specialized (%llu ready, %llu failed); "
           "cache hits %llu; runs %llu generic / %llu specialized\n",
           (unsigned long long)s->generic_compiles, (unsigned long long)s->specialized_compiles,
           (unsigned long long)s->specialized_ready, (unsigned long long)s->compile_failures,
           (unsigned long long)s->cache_hits, (unsigned long long)s->generic_runs,
           (unsigned long long)s->specialized_runs);
    printf("draws %llu; uploaded %llu B, downloaded %llu B; textures live %llu B, pooled %llu "
           "B, peak %llu B; compile %.1f ms\n",
           (unsigned long long)s->draws, (unsigned long long)s->bytes_uploaded,
           (unsigned long long)s->bytes_downloaded, (unsigned long long)s->live_texture_bytes,
           (unsigned long long)s->pooled_texture_bytes, (unsigned long long)s->peak_texture_bytes,
           s->compile_ms);
}

void tx_print_families_json(const tx_ctx *ctx) {
    tx_compile_family f[TX_MAX_COMPILE_FAMILIES];
    int n = tx_ctx_compile_families(ctx, f, TX_MAX_COMPILE_FAMILIES);
    printf("\"compile_families\": {");
    for (int i = 0; i < n; i++)
        printf("%s\"%s\": {\"generic\": %u, \"specialized\": %u, \"compile_ms\": %.3f, "
               "\"first_draw_ms\": %.3f}",
               i ? ", " : "", f[i].name, f[i].generic, f[i].specialized, f[i].compile_ms,
               f[i].first_draw_ms);
    printf("}");
}

void tx_print_families_text(const tx_ctx *ctx) {
    tx_compile_family f[TX_MAX_COMPILE_FAMILIES];
    int n = tx_ctx_compile_families(ctx, f, TX_MAX_COMPILE_FAMILIES);
    if (n == 0)
        return;
    printf("compile per family (programs generic + specialized, compile ms + first-draw ms):");
    for (int i = 0; i < n; i++)
        printf("%s %s %u+%u %.1f+%.1f", i ? ";" : "", f[i].name, f[i].generic, f[i].specialized,
               f[i].compile_ms, f[i].first_draw_ms);
    printf("\n");
}

void tx_json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}
