/* dl_iterate_phdr / RTLD_NODELETE for sanitizer builds (see pin_object). */
#define _GNU_SOURCE
#include "glctx.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>

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
    GLFWwindow *win; /* GLFW (X11) road; NULL on the EGL road */
    EGLSurface surf; /* EGL road: a 1x1 pbuffer, or EGL_NO_SURFACE (surfaceless) */
    EGLContext egl_ctx;
    bool open; /* false: a tx_host_later host whose context was not made (yet) */
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

/* ---- The EGL road: no X server, no window (headless servers, containers
 * with a GPU driver, CI without Xvfb). libEGL is opened at run time so the
 * binary needs it only when this road is taken. One display per process,
 * initialised once; each host gets its own context. */

static struct {
    bool tried, up;
    void *lib, *gles; /* libEGL.so.1; libGLESv2.so.2 for core entry points */
    EGLDisplay dpy;
    EGLConfig cfg;
    bool pbuffer;   /* the config renders to pbuffers; else surfaceless */
    char what[160]; /* which device, for TEXEL_VERBOSE and errors */
    PFNEGLGETPROCADDRESSPROC get_proc;
    PFNEGLGETERRORPROC get_error;
    PFNEGLCREATECONTEXTPROC create_context;
    PFNEGLDESTROYCONTEXTPROC destroy_context;
    PFNEGLCREATEPBUFFERSURFACEPROC create_pbuffer;
    PFNEGLDESTROYSURFACEPROC destroy_surface;
    PFNEGLMAKECURRENTPROC make_current;
} g_egl;

/* dlsym's object pointer as a function pointer (ISO C has no cast between
 * them; POSIX guarantees the representation). */
static tx_glproc sym(void *lib, const char *name) {
    void *p = lib ? dlsym(lib, name) : NULL;
    tx_glproc f;
    memcpy(&f, &p, sizeof f);
    return f;
}

static bool egl_has(const char *exts, const char *name) {
    size_t n = strlen(name);
    for (const char *p = exts; p && (p = strstr(p, name)) != NULL; p += n)
        if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* The display: a GPU device of EGL_EXT_device_enumeration when there is one
 * (TEXEL_EGL_DEVICE=N picks the N-th device, software ones included), else
 * Mesa's surfaceless platform, else the default display. */
static EGLDisplay egl_pick_display(const char *client_exts) {
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)g_egl.get_proc("eglGetPlatformDisplayEXT");
    PFNEGLQUERYDEVICESEXTPROC query_devices =
        (PFNEGLQUERYDEVICESEXTPROC)g_egl.get_proc("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC device_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)g_egl.get_proc("eglQueryDeviceStringEXT");
    PFNEGLGETDISPLAYPROC get_display = (PFNEGLGETDISPLAYPROC)sym(g_egl.lib, "eglGetDisplay");
    if (get_platform_display && query_devices && egl_has(client_exts, "EGL_EXT_platform_device")) {
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (query_devices(16, devs, &n) && n > 0) {
            const char *want = getenv("TEXEL_EGL_DEVICE");
            int pick = -1;
            if (want && *want) {
                pick = atoi(want);
                if (pick < 0 || pick >= n) {
                    fprintf(stderr, "texel: TEXEL_EGL_DEVICE=%s: EGL lists %d device%s (0 .. %d)\n",
                            want, (int)n, n == 1 ? "" : "s", (int)n - 1);
                    return EGL_NO_DISPLAY;
                }
            } else {
                for (int i = 0; i < n && pick < 0; i++) {
                    const char *e = device_string ? device_string(devs[i], EGL_EXTENSIONS) : NULL;
                    if (!egl_has(e, "EGL_MESA_device_software"))
                        pick = i;
                }
            }
            if (pick >= 0) {
                snprintf(g_egl.what, sizeof g_egl.what, "EGL device %d of %d", pick, (int)n);
                return get_platform_display(EGL_PLATFORM_DEVICE_EXT, devs[pick], NULL);
            }
        }
    }
    if (get_platform_display && egl_has(client_exts, "EGL_MESA_platform_surfaceless")) {
        snprintf(g_egl.what, sizeof g_egl.what, "EGL surfaceless platform");
        return get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    }
    snprintf(g_egl.what, sizeof g_egl.what, "EGL default display");
    return get_display ? get_display(EGL_DEFAULT_DISPLAY) : EGL_NO_DISPLAY;
}

static void egl_down(void) {
    PFNEGLTERMINATEPROC terminate = (PFNEGLTERMINATEPROC)sym(g_egl.lib, "eglTerminate");
    if (terminate && g_egl.dpy != EGL_NO_DISPLAY)
        terminate(g_egl.dpy);
}

/* Returns NULL when EGL is ready, else why not. */
static const char *egl_up(void) {
    if (g_egl.tried)
        return g_egl.up ? NULL : "EGL could not be initialised (TEXEL_VERBOSE=1 tells more)";
    g_egl.tried = true;
    g_egl.lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g_egl.lib)
        return "libEGL.so.1 is not installed";
    g_egl.gles = dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
    g_egl.get_proc = (PFNEGLGETPROCADDRESSPROC)sym(g_egl.lib, "eglGetProcAddress");
    g_egl.get_error = (PFNEGLGETERRORPROC)sym(g_egl.lib, "eglGetError");
    g_egl.create_context = (PFNEGLCREATECONTEXTPROC)sym(g_egl.lib, "eglCreateContext");
    g_egl.destroy_context = (PFNEGLDESTROYCONTEXTPROC)sym(g_egl.lib, "eglDestroyContext");
    g_egl.create_pbuffer =
        (PFNEGLCREATEPBUFFERSURFACEPROC)sym(g_egl.lib, "eglCreatePbufferSurface");
    g_egl.destroy_surface = (PFNEGLDESTROYSURFACEPROC)sym(g_egl.lib, "eglDestroySurface");
    g_egl.make_current = (PFNEGLMAKECURRENTPROC)sym(g_egl.lib, "eglMakeCurrent");
    PFNEGLQUERYSTRINGPROC query_string = (PFNEGLQUERYSTRINGPROC)sym(g_egl.lib, "eglQueryString");
    PFNEGLINITIALIZEPROC initialize = (PFNEGLINITIALIZEPROC)sym(g_egl.lib, "eglInitialize");
    PFNEGLBINDAPIPROC bind_api = (PFNEGLBINDAPIPROC)sym(g_egl.lib, "eglBindAPI");
    PFNEGLCHOOSECONFIGPROC choose_config =
        (PFNEGLCHOOSECONFIGPROC)sym(g_egl.lib, "eglChooseConfig");
    if (!g_egl.get_proc || !g_egl.get_error || !g_egl.create_context || !g_egl.destroy_context ||
        !g_egl.create_pbuffer || !g_egl.destroy_surface || !g_egl.make_current || !query_string ||
        !initialize || !bind_api || !choose_config)
        return "libEGL.so.1 lacks EGL 1.4 entry points";
    const char *client_exts = query_string(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    g_egl.dpy = egl_pick_display(client_exts);
    EGLint major = 0, minor = 0;
    if (g_egl.dpy == EGL_NO_DISPLAY || !initialize(g_egl.dpy, &major, &minor))
        return "no EGL display could be initialised";
    atexit(egl_down);
    if (!bind_api(EGL_OPENGL_ES_API))
        return "EGL cannot bind the OpenGL ES API";
    const EGLint pbuffer_attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE,
                                    EGL_PBUFFER_BIT, EGL_NONE};
    const EGLint any_attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, 0,
                                EGL_NONE};
    EGLint n = 0;
    g_egl.pbuffer = choose_config(g_egl.dpy, pbuffer_attrs, &g_egl.cfg, 1, &n) && n == 1;
    if (!g_egl.pbuffer) {
        const char *dpy_exts = query_string(g_egl.dpy, EGL_EXTENSIONS);
        if (!egl_has(dpy_exts, "EGL_KHR_surfaceless_context") ||
            !choose_config(g_egl.dpy, any_attrs, &g_egl.cfg, 1, &n) || n != 1)
            return "the EGL display has no OpenGL ES 3 config";
    }
    if (getenv("TEXEL_VERBOSE"))
        fprintf(stderr, "texel: %s, EGL %d.%d, %s\n", g_egl.what, (int)major, (int)minor,
                g_egl.pbuffer ? "pbuffer" : "surfaceless");
    g_egl.up = true;
    return NULL;
}

/* GL entry points on the EGL road: eglGetProcAddress, which before EGL 1.5
 * need not return core functions, then libGLESv2 itself. */
static tx_glproc egl_gl_proc(const char *name) {
    tx_glproc p = sym(g_egl.gles, name);
    return p ? p : (tx_glproc)g_egl.get_proc(name);
}

/* The two roads' openers: 0, or TX_HOST_NO_CONTEXT with why. */
static int egl_open(tx_host *h, char *why, size_t n) {
    const char *down = egl_up();
    if (down) {
        snprintf(why, n, "no GL context: %s (on X11, set DISPLAY or run under xvfb-run -a)", down);
        return TX_HOST_NO_CONTEXT;
    }
    const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                                EGL_NONE};
    h->egl_ctx = g_egl.create_context(g_egl.dpy, g_egl.cfg, EGL_NO_CONTEXT, ctx_attrs);
    if (h->egl_ctx == EGL_NO_CONTEXT) {
        snprintf(why, n, "could not create an OpenGL ES 3.0 context on the %s (EGL error 0x%x)",
                 g_egl.what, (unsigned)g_egl.get_error());
        return TX_HOST_NO_CONTEXT;
    }
    h->surf = EGL_NO_SURFACE;
    if (g_egl.pbuffer) {
        const EGLint surf_attrs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        h->surf = g_egl.create_pbuffer(g_egl.dpy, g_egl.cfg, surf_attrs);
    }
    if ((g_egl.pbuffer && h->surf == EGL_NO_SURFACE) ||
        !g_egl.make_current(g_egl.dpy, h->surf, h->surf, h->egl_ctx)) {
        snprintf(why, n, "could not make the EGL context current (EGL error 0x%x)",
                 (unsigned)g_egl.get_error());
        if (h->surf != EGL_NO_SURFACE)
            g_egl.destroy_surface(g_egl.dpy, h->surf);
        g_egl.destroy_context(g_egl.dpy, h->egl_ctx);
        return TX_HOST_NO_CONTEXT;
    }
    return 0;
}

static void egl_close(tx_host *h) {
    g_egl.make_current(g_egl.dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (h->surf != EGL_NO_SURFACE)
        g_egl.destroy_surface(g_egl.dpy, h->surf);
    g_egl.destroy_context(g_egl.dpy, h->egl_ctx);
}

/* TEXEL_GL=egl or glfw picks the road; unset, GLFW (X11) when DISPLAY is set
 * and EGL otherwise. */
static bool use_egl(void) {
    const char *gl = getenv("TEXEL_GL");
    if (gl && *gl)
        return strcmp(gl, "egl") == 0;
    const char *display = getenv("DISPLAY");
    return !display || !*display;
}

static int glfw_open(tx_host *h, char *why, size_t n) {
    glfwSetErrorCallback(on_glfw_error);
    if (!glfw_up()) {
        snprintf(why, n,
                 "no display for a GL context (set DISPLAY, run under xvfb-run -a, or "
                 "TEXEL_GL=egl)");
        return TX_HOST_NO_CONTEXT;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    h->win = glfwCreateWindow(64, 64, "texel", NULL, NULL);
    if (!h->win) {
        snprintf(why, n, "could not create an OpenGL ES 3.0 context");
        return TX_HOST_NO_CONTEXT;
    }
    glfwMakeContextCurrent(h->win);
    return 0;
}

static int host_gl_open(tx_host *h, char *why, size_t n) {
    int rc = use_egl() ? egl_open(h, why, n) : glfw_open(h, why, n);
    h->open = rc == 0;
#ifdef TX_HOST_ASAN
    if (h->open) /* the driver is loaded now: keep its name for LSan */
        dl_iterate_phdr(pin_object, NULL);
#endif
    return rc;
}

static void host_release(tx_host *h) {
    if (h->win)
        glfwDestroyWindow(h->win);
    else if (h->open)
        egl_close(h);
    free(h);
}

static void host_make_current(tx_host *h) {
    if (h->win)
        glfwMakeContextCurrent(h->win);
    else
        g_egl.make_current(g_egl.dpy, h->surf, h->surf, h->egl_ctx);
}

static tx_glproc (*host_proc(const tx_host *h))(const char *) {
    return h->win ? (tx_glproc(*)(const char *))glfwGetProcAddress : egl_gl_proc;
}

/* The loader of the road tx_host_later's context will take: chosen now,
 * since the engine keeps desc.get_proc_address from creation. */
static tx_glproc later_proc(const char *name) {
    return use_egl() ? egl_gl_proc(name) : glfwGetProcAddress(name);
}

static bool host_make_gl(void *user, char *why, size_t n) {
    return host_gl_open(user, why, n) == 0;
}

tx_host *tx_host_later(tx_ctx_desc *desc) {
    tx_host *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    desc->get_proc_address = later_proc;
    desc->make_gl = host_make_gl;
    desc->make_gl_user = h;
    return h;
}

int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx) {
    *host = NULL;
    *ctx = NULL;
    tx_host *h = calloc(1, sizeof *h);
    if (!h)
        return 1;
    char why[512];
    int rc = host_gl_open(h, why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "texel: %s\n", why);
        free(h);
        return rc;
    }
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    d.get_proc_address = host_proc(h);
    tx_status s = tx_ctx_create(&d, ctx);
    if (s != TX_STATUS_OK) {
        fprintf(stderr, "texel: tx_ctx_create failed: %s\n", tx_status_name(s));
        host_release(h);
        return 1;
    }
    *host = h;
    return 0;
}

void tx_host_close(tx_host *host, tx_ctx *ctx) {
    tx_ctx_destroy(ctx);
    if (host)
        host_release(host);
}

double tx_host_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

tx_status tx_host_new_ctx(tx_host *host, const tx_ctx_desc *desc, tx_ctx **ctx) {
    if (!host->open) { /* a tx_host_later host whose context was not made */
        fprintf(stderr, "texel: tx_host_new_ctx: the host has no GL context yet\n");
        return TX_STATUS_INVALID_ARGUMENT;
    }
    host_make_current(host);
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    d.get_proc_address = host_proc(host);
    return tx_ctx_create(&d, ctx);
}
