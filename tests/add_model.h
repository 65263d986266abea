/* test_add's model (x + y, [3, 4, 5]; libonnx-testdata) run once on feeds
 * made on one device: device_test and nogpu_test. */
#ifndef TX_TEST_ADD_MODEL_H
#define TX_TEST_ADD_MODEL_H

#include <math.h>

#include "texel.h"

#define MODEL "/usr/share/libonnx-testdata/data/node/test_add/model.onnx"

/* Feeds x = i, y = i / 2 on feed_dev; *sum0 = the last output, 59 + 29.5
 * (NaN on failure). */
static tx_status run_add(tx_ctx *ctx, tx_session *s, tx_device feed_dev, float *sum0) {
    float a[60], b[60], y[60];
    for (int i = 0; i < 60; i++)
        a[i] = (float)i, b[i] = 0.5f * (float)i;
    tx_tensor x = {0}, z = {0}, out = {0};
    tx_tensor_desc d = {.rank = 3, .shape = {3, 4, 5}, .device = feed_dev};
    d.data = a;
    tx_status st = tx_tensor_create(ctx, &d, &x);
    d.data = b;
    st = st ? st : tx_tensor_create(ctx, &d, &z);
    tx_feed feeds[2] = {{"x", x}, {"y", z}};
    st = st ? st : tx_session_run(s, feeds, 2, NULL, 1, &out);
    st = st ? st : tx_tensor_read(ctx, out, y, sizeof y);
    *sum0 = st ? NAN : y[59];
    tx_tensor_destroy(ctx, out);
    tx_tensor_destroy(ctx, x);
    tx_tensor_destroy(ctx, z);
    return st;
}

#endif
