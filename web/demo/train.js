// The training demo: an MLP or a small CNN trained on the sklearn digits with
// texel's tape and Adam, a live loss / held-out accuracy chart.
// ?autorun=1 trains the MLP on the GPU and the CNN on the GPU and the CPU device
// (?runs=mlp:gpu,cnn:gpu,... picks others; ?epochs=N, default 15), checks >= 95%
// held-out accuracy and sets
// window.__result (web/test/run.mjs page mode).
import * as texel from '../texel.js';

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const status = (s) => { $('status').textContent = s; };

// splitmix-style seeded generator: the same shuffle and weights every run
function rng(seed) {
  let s = BigInt(seed);
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    return Number((z ^ (z >> 31n)) >> 40n) / 16777216;
  };
}

async function loadDigits() {
  const res = await fetch('assets/digits.csv');
  if (!res.ok) throw new Error(`assets/digits.csv: HTTP ${res.status} (run scripts/demo-assets.sh)`);
  const rows = (await res.text()).trim().split('\n').map((l) => l.split(',').map(Number));
  const n = rows.length, x = new Float32Array(n * 64), y = new Int32Array(n);
  rows.forEach((r, i) => { for (let j = 0; j < 64; j++) x[i * 64 + j] = r[j] / 16; y[i] = r[64]; });
  const order = [...Array(n).keys()], rand = rng(7);
  for (let i = n - 1; i > 0; i--) { const j = Math.floor(rand() * (i + 1)); [order[i], order[j]] = [order[j], order[i]]; }
  const take = (idx) => ({ n: idx.length, x: Float32Array.from(idx.flatMap((r) => Array.from(x.subarray(r * 64, r * 64 + 64)))),
    y: Int32Array.from(idx.map((r) => y[r])) });
  return { train: take(order.slice(0, n - 360)), test: take(order.slice(n - 360)) };
}

function makeModel(tx, kind, device) {
  const rand = rng(1);
  const he = (shape, fan) => {
    const a = Math.sqrt(6 / fan), n = shape.reduce((p, d) => p * d, 1);
    return tx.variable(Float32Array.from({ length: n }, () => (rand() * 2 - 1) * a), shape, { device });
  };
  const zeros = (n) => tx.variable(new Float32Array(n), [n], { device });
  if (kind === 'mlp') {
    const p = [he([64, 64], 64), zeros(64), he([64, 10], 64), zeros(10)];
    return { params: p, forward: (x) => x.matmul(p[0], { bias: p[1], activation: 'relu' }).matmul(p[2], { bias: p[3] }) };
  }
  const p = [he([8, 1, 3, 3], 9), zeros(8), he([16, 8, 3, 3], 72), zeros(16), he([64, 10], 64), zeros(10)];
  const pool = { kernelShape: [2, 2], strides: [2, 2] };
  return {
    params: p,
    forward: (x) => x.reshape([x.shape[0], 1, 8, 8])
      .conv(p[0], { pads: [1, 1, 1, 1], bias: p[1], activation: 'relu' }).maxpool(pool)
      .conv(p[2], { pads: [1, 1, 1, 1], bias: p[3], activation: 'relu' }).maxpool(pool)
      .reshape([x.shape[0], 64]).matmul(p[4], { bias: p[5] }),
  };
}

function chart(losses, accs, epochs, steps) {
  const c = $('chart'), g = c.getContext('2d'), W = c.width, H = c.height, total = epochs * steps;
  g.clearRect(0, 0, W, H);
  g.font = '12px system-ui';
  const maxLoss = Math.max(2.5, ...losses.slice(0, 5));
  g.strokeStyle = '#36c'; g.beginPath();
  losses.forEach((l, i) => { const px = 40 + (W - 60) * i / total, py = H - 20 - (H - 40) * Math.min(l, maxLoss) / maxLoss; i ? g.lineTo(px, py) : g.moveTo(px, py); });
  g.stroke();
  g.strokeStyle = '#c33'; g.beginPath();
  accs.forEach((a, e) => { const px = 40 + (W - 60) * ((e + 1) * steps) / total, py = H - 20 - (H - 40) * a; e ? g.lineTo(px, py) : g.moveTo(px, py); });
  g.stroke();
  g.fillStyle = '#36c'; g.fillText(`training loss (${losses.length ? losses[losses.length - 1].toFixed(3) : '-'})`, 45, 15);
  g.fillStyle = '#c33'; g.fillText(`held-out accuracy (${accs.length ? (100 * accs[accs.length - 1]).toFixed(1) : '-'}%)`, 260, 15);
}

async function evaluate(tx, model, test, device) {
  const logits = tx.scope(() => model.forward(tx.tensor(test.x, [test.n, 64], { device })));
  const v = await logits.data();
  logits.dispose();
  let right = 0;
  for (let i = 0; i < test.n; i++) {
    let best = 0;
    for (let c = 1; c < 10; c++) if (v[i * 10 + c] > v[i * 10 + best]) best = c;
    right += best === test.y[i];
  }
  return right / test.n;
}

async function train(tx, data, kind, device, epochs) {
  const B = 32, steps = Math.floor(data.train.n / B), rand = rng(3);
  const model = makeModel(tx, kind, device), opt = tx.optimizer('adam', { lr: 0.005 });
  const losses = [], accs = [], t0 = performance.now();
  const order = [...Array(data.train.n).keys()];
  for (let e = 0; e < epochs; e++) {
    for (let i = order.length - 1; i > 0; i--) { const j = Math.floor(rand() * (i + 1)); [order[i], order[j]] = [order[j], order[i]]; }
    for (let s = 0; s < steps; s++) {
      const rows = order.slice(s * B, s * B + B);
      const xb = new Float32Array(B * 64), yb = new Int32Array(B);
      rows.forEach((r, i) => { xb.set(data.train.x.subarray(r * 64, r * 64 + 64), i * 64); yb[i] = data.train.y[r]; });
      const loss = tx.scope(() => {
        const x = tx.tensor(xb, [B, 64], { device }), y = tx.tensor(yb, [B], { device, dtype: 'int32' });
        return opt.minimize(() => tx.softmaxCrossEntropy(model.forward(x), y), model.params);
      });
      losses.push((await loss.data())[0]);
      loss.dispose();
    }
    accs.push(await evaluate(tx, model, data.test, device));
    chart(losses, accs, epochs, steps);
    status(`${kind} on the ${device}: epoch ${e + 1}/${epochs}, loss ${losses[losses.length - 1].toFixed(4)}, held-out accuracy ${(100 * accs[e]).toFixed(2)}%`);
    await new Promise((r) => setTimeout(r, 0));
  }
  const ms = (performance.now() - t0) / (epochs * steps);
  for (const p of model.params) p.dispose();
  opt.dispose();
  return { acc: accs[accs.length - 1], first: losses[0], last: losses[losses.length - 1], ms };
}

async function main() {
  const tx = await texel.create();
  const data = await loadDigits();
  status(`ready: ${data.train.n} training rows, ${data.test.n} held out; ${tx.caps.renderer}`);
  $('train').onclick = async () => {
    $('train').disabled = true;
    try {
      const r = await train(tx, data, $('model').value, $('device').value, Number($('epochs').value));
      status(`${$('model').value}: ${(100 * r.acc).toFixed(2)}% held out, ${r.ms.toFixed(1)} ms a step`);
    } catch (e) {
      status(`error: ${e.message}`);
    }
    $('train').disabled = false;
  };
  if (!params.get('autorun')) return;
  const epochs = Number(params.get('epochs') || 15);
  let passed = 0, failed = 0;
  const plan = (params.get('runs') || 'mlp:gpu,cnn:gpu,cnn:cpu').split(',').map((r) => r.split(':'));
  for (const [kind, device] of plan) {
    const before = tx.stats().jsLiveTensors;
    const r = await train(tx, data, kind, device, epochs);
    const ok = r.acc >= 0.95 && r.last < r.first && tx.stats().jsLiveTensors === before;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${kind} on the ${device}: ${epochs} epochs, loss ${r.first.toFixed(3)} -> ${r.last.toFixed(3)}, held-out accuracy ${(100 * r.acc).toFixed(2)}% (want >= 95%), ${r.ms.toFixed(1)} ms a step, ${tx.stats().jsLiveTensors - before} tensors left`);
    if (ok) passed++; else failed++;
  }
  console.log(`${passed} passed, ${failed} failed`);
  window.__result = { status: failed ? 1 : 0 };
}

main().catch((e) => {
  status(`error: ${e.message}`);
  console.log(`train demo crashed: ${e.stack || e}`);
  console.log('0 passed, 1 failed');
  window.__result = { status: 1 };
});
