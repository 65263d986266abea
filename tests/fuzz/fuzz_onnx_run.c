/* Fuzz target: fuzz_onnx_graph.c plus one run of every session that loads
 * (feeds of the declared shapes, at most 65,536 elements in all): the
 * executors' run-time checks on whatever shapes and attributes a hostile
 * model reaches them with. */
#define FUZZ_ONNX_RUN 1
#include "fuzz_onnx_graph.c"
