/* The tests' plain-C determinant, the reference for ONNX Det. */
#ifndef TX_TEST_DET_REF_H
#define TX_TEST_DET_REF_H

#include <math.h>

/* The determinant of the row-major n x n matrix m (n <= 24), by Gaussian
 * elimination with partial pivoting in double. */
static inline double tx_test_det_ref(const float *m, int n) {
    double a[24 * 24], d = 1;
    for (int i = 0; i < n * n; i++)
        a[i] = m[i];
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
                p = r;
        if (a[p * n + c] == 0)
            return 0;
        if (p != c) {
            for (int k = 0; k < n; k++) {
                double t = a[c * n + k];
                a[c * n + k] = a[p * n + k];
                a[p * n + k] = t;
            }
            d = -d;
        }
        d *= a[c * n + c];
        for (int r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (int k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
        }
    }
    return d;
}

#endif
