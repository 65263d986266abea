// texel's side of the browser benchmark: the same case names as bench/cases.c,
// through texel's JS API (web/texel.js, served under /texel/ by run.mjs).
import * as texel from '/texel/texel.js';

export const create = (opts) => texel.create(opts);

const same = { autoPad: 1 }; // TX_AUTO_PAD_SAME_UPPER: TF's "same"
const mobilenet = [[1, 2], [32, 1], [1, 1], [64, 2], [1, 1]]; // [group, stride]

export const cases = {
  matmul_128: (tx, t) => t[0].matmul(t[1]),
  matmul_256: (tx, t) => t[0].matmul(t[1]),
  matmul_512: (tx, t) => t[0].matmul(t[1]),
  matmul_1024: (tx, t) => t[0].matmul(t[1]),
  add_1m: (tx, t) => t[0].add(t[1]),
  relu_1m: (tx, t) => t[0].relu(),
  conv2d_56: (tx, t) => t[0].conv(t[1], { pads: [1, 1, 1, 1], bias: t[2], activation: 'relu' }),
  depthwise_112: (tx, t) =>
    t[0].conv(t[1], { group: 32, pads: [1, 1, 1, 1], bias: t[2], activation: 'relu' }),
  conv1x1_56: (tx, t) => t[0].conv(t[1], { bias: t[2], activation: 'relu6' }),
  softmax_256x1000: (tx, t) => t[0].softmax({ axis: -1 }),
  sum_1m: (tx, t) => t[0].reduce_sum({ dropDims: true }),
  // forward, MSE, the tape's backward and an SGD step (bench/cases.c's train_mlp_step)
  train_mlp_step: (tx, t) => {
    const opt = tx.optimizer('sgd', { lr: 1e-3 });
    const loss = tx.scope(() => opt.minimize(() =>
      tx.mseLoss(t[0].matmul(t[1], { bias: t[2], activation: 'relu' }).matmul(t[3], { bias: t[4] }), t[5]),
    [t[1], t[2], t[3], t[4]]));
    opt.dispose();
    return loss;
  },
  // the digits CNN's step (bench/cases.c's train_cnn_step)
  train_cnn_step: (tx, t) => {
    const opt = tx.optimizer('sgd', { lr: 1e-3 });
    const pool = { kernelShape: [2, 2], strides: [2, 2] };
    const loss = tx.scope(() => opt.minimize(() => tx.mseLoss(t[0]
      .conv(t[1], { pads: [1, 1, 1, 1], bias: t[2], activation: 'relu' }).maxpool(pool)
      .conv(t[3], { pads: [1, 1, 1, 1], bias: t[4], activation: 'relu' }).maxpool(pool)
      .reshape([32, 64]).matmul(t[5], { bias: t[6] }), t[7]),
    [t[1], t[2], t[3], t[4], t[5], t[6]]));
    opt.dispose();
    return loss;
  },
  mobilenet_head: (tx, t) => tx.scope(() => {
    let x = t[0];
    mobilenet.forEach(([group, stride], l) => {
      x = x.conv(t[1 + 2 * l], { ...same, group, strides: [stride, stride], bias: t[2 + 2 * l],
        activation: 'relu6' });
    });
    return x;
  }),
};
