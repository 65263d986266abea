/* ONNX element types: names, float/int classes, and decoding of TensorProto raw_data. */
#include <math.h>
#include <string.h>

#include "model.h"

const char *tx_onnx_type_name(int elem) {
    switch (elem) {
    case TX_ONNX_FLOAT: return "float";
    case TX_ONNX_UINT8: return "uint8";
    case TX_ONNX_INT8: return "int8";
    case TX_ONNX_UINT16: return "uint16";
    case TX_ONNX_INT16: return "int16";
    case TX_ONNX_INT32: return "int32";
    case TX_ONNX_INT64: return "int64";
    case TX_ONNX_STRING: return "string";
    case TX_ONNX_BOOL: return "bool";
    case TX_ONNX_FLOAT16: return "float16";
    case TX_ONNX_DOUBLE: return "double";
    case TX_ONNX_UINT32: return "uint32";
    case TX_ONNX_UINT64: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case TX_ONNX_BFLOAT16: return "bfloat16";
    default: return "unknown type";
    }
}

bool tx_onnx_type_is_float(int elem) {
    return elem == TX_ONNX_FLOAT || elem == TX_ONNX_FLOAT16 || elem == TX_ONNX_DOUBLE ||
           elem == TX_ONNX_BFLOAT16;
}

bool tx_onnx_type_is_int(int elem) {
    switch (elem) {
    case TX_ONNX_UINT8:
    case TX_ONNX_INT8:
    case TX_ONNX_UINT16:
    case TX_ONNX_INT16:
    case TX_ONNX_INT32:
    case TX_ONNX_INT64:
    case TX_ONNX_BOOL:
    case TX_ONNX_UINT32:
    case TX_ONNX_UINT64: return true;
    default: return false;
    }
}

int tx_onnx_raw_width(int elem) {
    switch (elem) {
    case TX_ONNX_UINT8:
    case TX_ONNX_INT8:
    case TX_ONNX_BOOL: return 1;
    case TX_ONNX_UINT16:
    case TX_ONNX_INT16:
    case TX_ONNX_FLOAT16:
    case TX_ONNX_BFLOAT16: return 2;
    case TX_ONNX_FLOAT:
    case TX_ONNX_INT32:
    case TX_ONNX_UINT32: return 4;
    case TX_ONNX_INT64:
    case TX_ONNX_DOUBLE:
    case TX_ONNX_UINT64: return 8;
    default: return 0;
    }
}

float tx_onnx_half_to_float(uint16_t h) {
    uint32_t u = tx_half_bits_to_float_bits(h);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float tx_onnx_bf16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void tx_onnx_raw_get(const uint8_t *r, int elem, int64_t k, float *f, int64_t *i) {
    int w = tx_onnx_raw_width(elem);
    const uint8_t *q = r + k * w;
    uint64_t u = 0;
    for (int b = w - 1; b >= 0; b--)
        u = u << 8 | q[b];
    switch (elem) {
    case TX_ONNX_FLOAT: {
        uint32_t x = (uint32_t)u;
        memcpy(f, &x, 4);
        break;
    }
    case TX_ONNX_DOUBLE: {
        double d;
        memcpy(&d, &u, 8);
        *f = (float)d;
        break;
    }
    case TX_ONNX_FLOAT16: *f = tx_onnx_half_to_float((uint16_t)u); break;
    case TX_ONNX_BFLOAT16: *f = tx_onnx_bf16_to_float((uint16_t)u); break;
    case TX_ONNX_INT8: *i = (int8_t)u; break;
    case TX_ONNX_INT16: *i = (int16_t)u; break;
    case TX_ONNX_INT32: *i = (int32_t)u; break;
    case TX_ONNX_BOOL: *i = u != 0; break;
    default: *i = (int64_t)u; break; /* uint8/16/32/64, int64 */
    }
}
