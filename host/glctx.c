#include "glctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

struct tx_host {
    GLFWwindow *win;
};

static void on_glfw_error(int code, const char *msg) {
    if (getenv("TEXEL_VERBOSE"))
        fprintf(stderr, "glfw error %d: %s\n", code, msg);
}

int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx) {
    *host = NULL;
    *ctx = NULL;
    glfwSetErrorCallback(on_glfw_error);
    /* Under xvfb-run with many clients, connecting to the X server now and then
     * fails transiently; a few retries keep the tests from flaking. */
    int inited = 0;
    for (int attempt = 0; attempt < 5 && !(inited = glfwInit()); attempt++)
        nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
    if (!inited) {
        fprintf(stderr, "texel: no display for a GL context (set DISPLAY or run under "
                        "xvfb-run -a)\n");
        return TX_HOST_NO_CONTEXT;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow *win = glfwCreateWindow(64, 64, "texel", NULL, NULL);
    if (!win) {
        fprintf(stderr, "texel: could not create an OpenGL ES 3.0 context\n");
        glfwTerminate();
        return TX_HOST_NO_CONTEXT;
    }
    glfwMakeContextCurrent(win);
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    d.get_proc_address = (tx_glproc(*)(const char *))glfwGetProcAddress;
    tx_status s = tx_ctx_create(&d, ctx);
    if (s != TX_STATUS_OK) {
        fprintf(stderr, "texel: tx_ctx_create failed: %s\n", tx_status_name(s));
        glfwDestroyWindow(win);
        glfwTerminate();
        return 1;
    }
    tx_host *h = calloc(1, sizeof *h);
    if (!h) {
        tx_ctx_destroy(*ctx);
        glfwDestroyWindow(win);
        glfwTerminate();
        return 1;
    }
    h->win = win;
    *host = h;
    return 0;
}

void tx_host_close(tx_host *host, tx_ctx *ctx) {
    tx_ctx_destroy(ctx);
    if (host) {
        glfwDestroyWindow(host->win);
        free(host);
    }
    glfwTerminate();
}

double tx_host_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

tx_status tx_host_new_ctx(tx_host *host, const tx_ctx_desc *desc, tx_ctx **ctx) {
    glfwMakeContextCurrent(host->win);
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    d.get_proc_address = (tx_glproc(*)(const char *))glfwGetProcAddress;
    return tx_ctx_create(&d, ctx);
}
