/* dl_iterate_phdr / RTLD_NODELETE for sanitizer builds (see pin_object). */
#define _GNU_SOURCE
#include "glctx.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#if defined(__SANITIZE_ADDRESS__)
#define TX_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TX_HOST_ASAN 1
#endif
#endif

#ifdef TX_HOST_ASAN
#include <dlfcn.h>
#include <link.h>

/* LeakSanitizer symbolizes leaks at exit, after glfwTerminate has dlclosed
 * libGL and with it the Mesa driver: the driver's own leaks then show as
 * "<unknown module>" and cannot be matched by tests/lsan.supp. Pinning every
 * loaded object (RTLD_NOLOAD | RTLD_NODELETE promotes a resident library)
 * keeps their names. Sanitizer builds only. */
static int pin_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0]) {
        void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        if (h)
            dlclose(h);
    }
    return 0;
}
#endif

struct tx_host {
    GLFWwindow *win;
};

static void on_glfw_error(int code, const char *msg) {
    if (getenv("TEXEL_VERBOSE"))
        fprintf(stderr, "glfw error %d: %s\n", code, msg);
}

/* GLFW is initialised once per process and terminated at exit: with Mesa
 * llvmpipe under Xvfb, some 16-25 glfwInit/glfwTerminate cycles in one
 * process make the next XOpenDisplay fail ("X11: Failed to open display"),
 * while windows created and destroyed under one init are fine. Suites open
 * a context per test, so they would fail at random past that count. */
static bool g_glfw_up;

static bool glfw_up(void) {
    if (g_glfw_up)
        return true;
    /* Under xvfb-run with many clients, connecting to the X server now and then
     * fails transiently; a few retries keep the tests from flaking. */
    for (int attempt = 0; !glfwInit(); attempt++) {
        if (attempt == 4)
            return false;
        nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
    }
    g_glfw_up = true;
    atexit(glfwTerminate);
    return true;
}

int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx) {
    *host = NULL;
    *ctx = NULL;
    glfwSetErrorCallback(on_glfw_error);
    if (!glfw_up()) {
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
        return TX_HOST_NO_CONTEXT;
    }
    glfwMakeContextCurrent(win);
#ifdef TX_HOST_ASAN
    dl_iterate_phdr(pin_object, NULL);
#endif
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    d.get_proc_address = (tx_glproc(*)(const char *))glfwGetProcAddress;
    tx_status s = tx_ctx_create(&d, ctx);
    if (s != TX_STATUS_OK) {
        fprintf(stderr, "texel: tx_ctx_create failed: %s\n", tx_status_name(s));
        glfwDestroyWindow(win);
        return 1;
    }
    tx_host *h = calloc(1, sizeof *h);
    if (!h) {
        tx_ctx_destroy(*ctx);
        glfwDestroyWindow(win);
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
