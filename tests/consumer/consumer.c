/* A program that uses texel as another project would: only <texel.h>, the
 * installed library (pkg-config texel, or the meson subproject) and GLFW for
 * the GL ES 3.0 context. It runs a matmul and an ONNX model (argv[1], e.g.
 * libonnx-testdata's test_relu) on the GPU and checks both against plain C.
 * Prints "N passed, N failed"; exit 77 when no GL context can be made. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <texel.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

static int passed, failed;

static void check(int ok, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s\n", what);
    }
}

static unsigned char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void test_matmul(tx_ctx *ctx) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, y[4] = {0};
    const float want[4] = {4, 5, 10, 11};
    tx_tensor ta, tb, tc;
    tx_status s =
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {2, 3}, .data = a}, &ta);
    s = s ? s
          : tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, 2}, .data = b}, &tb);
    s = s ? s : tx_matmul(ctx, ta, tb, NULL, &tc);
    s = s ? s : tx_tensor_read(ctx, tc, y, sizeof y);
    if (s)
        printf("matmul: %s: %s\n", tx_status_name(s), tx_last_error(ctx));
    check(s == TX_STATUS_OK && memcmp(y, want, sizeof y) == 0, "matmul [2,3] x [3,2]");
    tx_tensor_destroy(ctx, ta);
    tx_tensor_destroy(ctx, tb);
    tx_tensor_destroy(ctx, tc);
}

/* A model with one float input and one output that is relu of it. */
static void test_session(tx_ctx *ctx, const char *path) {
    size_t len = 0;
    unsigned char *bytes = read_file(path, &len);
    check(bytes != NULL, "read the model");
    if (!bytes) {
        printf("cannot read %s\n", path);
        return;
    }
    tx_session *sess = NULL;
    tx_status s =
        tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = TX_DEVICE_GPU}, &sess);
    free(bytes);
    check(s == TX_STATUS_OK, "tx_session_create");
    if (s) {
        printf("session: %s: %s\n", tx_status_name(s), tx_last_error(ctx));
        return;
    }
    tx_value_info in;
    tx_session_input_info(sess, 0, &in);
    tx_tensor_desc d = {.rank = in.rank};
    size_t n = 1;
    for (int i = 0; i < in.rank; i++)
        n *= (size_t)(d.shape[i] = in.shape[i] > 0 ? in.shape[i] : 1);
    float *x = malloc(n * sizeof *x), *y = calloc(n, sizeof *y);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((int)(i % 7) - 3) * 0.5f;
    d.data = x;
    tx_tensor tx_in, tx_out = {0};
    s = tx_tensor_create(ctx, &d, &tx_in);
    tx_feed feed = {in.name, tx_in};
    /* compiled ahead (what a progress bar counts), then run */
    int programs = 0;
    tx_status cs = s ? s : tx_session_compile(sess, &feed, 1, &programs);
    int left = cs ? -1 : tx_session_compiling(sess);
    for (int i = 0; i < 500 && left > 0; i++) {
        glfwWaitEventsTimeout(0.01);
        left = tx_session_compiling(sess);
    }
    check(cs == TX_STATUS_OK && programs >= 1 && left == 0, "tx_session_compile");
    s = s ? s : tx_session_run(sess, &feed, 1, NULL, 1, &tx_out);
    s = s ? s : tx_tensor_read(ctx, tx_out, y, n * sizeof *y);
    if (s)
        printf("run: %s: %s\n", tx_status_name(s), tx_last_error(ctx));
    int ok = s == TX_STATUS_OK;
    for (size_t i = 0; ok && i < n; i++)
        ok = fabsf(y[i] - (x[i] > 0 ? x[i] : 0)) <= 1e-6f;
    check(ok, "session output is relu(x)");
    tx_tensor_destroy(ctx, tx_in);
    tx_tensor_destroy(ctx, tx_out);
    tx_session_destroy(sess);
    free(x);
    free(y);
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: consumer MODEL.onnx [VERSION]\n");
        return 2;
    }
    /* The version the build system saw (pkg-config --modversion, meson's
     * dependency version) is the one the library reports. */
    printf("texel %s (%d)\n", tx_version(), tx_version_number());
    if (argc == 3)
        check(strcmp(tx_version(), argv[2]) == 0, "tx_version() is the build system's version");
    if (!glfwInit()) {
        fprintf(stderr, "consumer: no display (run under xvfb-run -a)\n");
        return 77;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow *win = glfwCreateWindow(16, 16, "consumer", NULL, NULL);
    if (!win) {
        fprintf(stderr, "consumer: no GL ES 3.0 context\n");
        glfwTerminate();
        return 77;
    }
    glfwMakeContextCurrent(win);
    tx_ctx *ctx = NULL;
    tx_status s = tx_ctx_create(
        &(tx_ctx_desc){.get_proc_address = (tx_glproc(*)(const char *))glfwGetProcAddress}, &ctx);
    check(s == TX_STATUS_OK, "tx_ctx_create");
    if (s == TX_STATUS_OK) {
        test_matmul(ctx);
        test_session(ctx, argv[1]);
        tx_ctx_destroy(ctx);
    }
    glfwDestroyWindow(win);
    glfwTerminate();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
