/* Protobuf wire-format reader. No protobuf library builds from Debian for both
 * native and wasm, and ONNX needs only the wire format: varints, fixed32/64
 * and length-delimited fields. Every read checks the remaining bytes first, so
 * a truncated or hostile buffer yields false, never an out-of-bounds read. */
#include "model.h"

bool tx_pb_varint(tx_pb *b, uint64_t *v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end)
            return false;
        uint8_t c = *b->p++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false; /* more than 10 bytes */
}

bool tx_pb_fixed32(tx_pb *b, uint32_t *v) {
    if (b->end - b->p < 4)
        return false;
    *v = (uint32_t)b->p[0] | (uint32_t)b->p[1] << 8 | (uint32_t)b->p[2] << 16 |
         (uint32_t)b->p[3] << 24;
    b->p += 4;
    return true;
}

bool tx_pb_fixed64(tx_pb *b, uint64_t *v) {
    uint32_t lo, hi;
    if (b->end - b->p < 8 || !tx_pb_fixed32(b, &lo) || !tx_pb_fixed32(b, &hi))
        return false;
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

bool tx_pb_sub(tx_pb *b, tx_pb *sub) {
    uint64_t n;
    if (!tx_pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
        return false;
    sub->p = b->p;
    sub->end = b->p + n;
    b->p += n;
    return true;
}

bool tx_pb_skip(tx_pb *b, int wire) {
    uint64_t v;
    uint32_t w;
    tx_pb s;
    switch (wire) {
    case TX_PB_VARINT: return tx_pb_varint(b, &v);
    case TX_PB_I64: return tx_pb_fixed64(b, &v);
    case TX_PB_LEN: return tx_pb_sub(b, &s);
    case TX_PB_I32: return tx_pb_fixed32(b, &w);
    default: return false; /* groups (3, 4) are not used by ONNX */
    }
}

int tx_pb_next(tx_pb *b, uint32_t *field, int *wire) {
    if (b->p >= b->end)
        return 0;
    uint64_t key;
    if (!tx_pb_varint(b, &key))
        return -1;
    uint64_t f = key >> 3;
    if (f == 0 || f > 0x1fffffff)
        return -1;
    *field = (uint32_t)f;
    *wire = (int)(key & 7);
    return 1;
}
