// Reference runs with onnxruntime-node, and output comparison.
//   node ort_run.js run MODEL.onnx OUTDIR NAME=FILE.npy...
//       runs the model on the .npy inputs (CPU), writes OUTDIR/<name>.npy
//       (output names sanitized as `texel run --save` does) as float32
//   node ort_run.js compare REFDIR GOTDIR [--tol T] [names...]
//       max |got - ref| per output; fails (exit 1) unless
//       max |got - ref| <= T * max(1, |ref|) elementwise (--tol T, default 1e-3);
//       with --within FLOATREF (a quantized model; FLOATREF: onnxruntime's
//       outputs of the float model on the same inputs) an output also passes
//       when max |got - ref| <= max |ref - FLOATREF|
//   node ort_run.js ranges MODEL OUT.json NAME=FILE.npy...
//       merges each output's [min, max] into OUT.json (calibration)
// NODE_PATH must reach onnxruntime-node (tests/models_test.sh sets it); ORT_OPT
// sets its graphOptimizationLevel (default "all"; "disabled" runs the graph
// as written, to tell its fused kernels from the plain ones).
'use strict';
const fs = require('fs');
const path = require('path');

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not .npy');
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const h = b.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(h)[1];
  if (/'fortran_order':\s*True/.test(h)) throw new Error(file + ': Fortran order');
  const dims = /'shape':\s*\(([^)]*)\)/.exec(h)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const n = dims.reduce((a, c) => a * c, 1);
  const data = b.subarray(off + hlen);
  const ab = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const types = {'<f4': Float32Array, '<f8': Float64Array, '<i4': Int32Array, '<i8': BigInt64Array};
  if (!types[descr]) throw new Error(file + ': dtype ' + descr);
  const T = types[descr];
  if (data.byteLength < n * T.BYTES_PER_ELEMENT) throw new Error(file + ': truncated');
  return {descr, dims, data: new T(ab, 0, n)};
}

function writeNpyF32(file, dims, values) {
  let h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
      dims.map(d => d + ',').join(' ') + '), }';
  const total = 10 + h.length + 1;
  h += ' '.repeat((64 - total % 64) % 64) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(pre);
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(h.length, 8);
  const f = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) f[i] = Number(values[i]);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(h, 'latin1'), Buffer.from(f.buffer)]));
}

const sanitize = s => s.replace(/[^A-Za-z0-9_.-]/g, '_');

async function open(model, feedsArgs) {
  const ort = require('onnxruntime-node');
  const sess = await ort.InferenceSession.create(model, {executionProviders: ['cpu'], graphOptimizationLevel: process.env.ORT_OPT || 'all'});
  const feeds = {};
  for (const a of feedsArgs) {
    const eq = a.indexOf('=');
    const name = a.slice(0, eq), npy = readNpy(a.slice(eq + 1));
    const meta = sess.inputMetadata ? sess.inputMetadata.find(m => m.name === name) : null;
    let type = npy.descr[1] === 'f' ? 'float32' : 'int64', data = npy.data;
    if (meta && meta.type && meta.type !== type) type = meta.type;
    if (type === 'float32' && !(data instanceof Float32Array)) data = Float32Array.from(data, Number);
    if (type === 'int64' && !(data instanceof BigInt64Array)) data = BigInt64Array.from(data, v => BigInt(Math.trunc(Number(v))));
    feeds[name] = new ort.Tensor(type, data, npy.dims);
  }
  return {sess, feeds};
}

async function run(model, outdir, feedsArgs) {
  const {sess, feeds} = await open(model, feedsArgs);
  const t0 = process.hrtime.bigint();
  const out = await sess.run(feeds);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  fs.mkdirSync(outdir, {recursive: true});
  for (const name of sess.outputNames) {
    writeNpyF32(path.join(outdir, sanitize(name) + '.npy'), out[name].dims, out[name].data);
  }
  console.log(JSON.stringify({outputs: sess.outputNames, ms}));
}

// Merges each output's [min, max] over this run into OUT.json (calibration
// ranges for tests/models/quantize.py).
async function ranges(model, outJson, feedsArgs) {
  const {sess, feeds} = await open(model, feedsArgs);
  const out = await sess.run(feeds);
  let r = {};
  if (fs.existsSync(outJson)) r = JSON.parse(fs.readFileSync(outJson, 'utf8'));
  for (const name of sess.outputNames) {
    let lo = Infinity, hi = -Infinity;
    for (const v of out[name].data) {
      const x = Number(v);
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) continue;
    const p = r[name];
    r[name] = p ? [Math.min(p[0], lo), Math.max(p[1], hi)] : [lo, hi];
  }
  fs.writeFileSync(outJson, JSON.stringify(r));
  console.log(JSON.stringify({tensors: Object.keys(r).length}));
}

function compare(refdir, gotdir, names, tol, within) {
  if (!names.length)
    names = fs.readdirSync(refdir).filter(f => f.endsWith('.npy')).map(f => f.slice(0, -4));
  let ok = true;
  const res = [];
  for (const n of names) {
    const r = readNpy(path.join(refdir, n + '.npy'));
    let g;
    try { g = readNpy(path.join(gotdir, n + '.npy')); } catch (e) {
      res.push({name: n, error: 'missing texel output'}); ok = false; continue;
    }
    if (r.dims.join('x') !== g.dims.join('x')) {
      res.push({name: n, error: `shape ${g.dims} vs reference ${r.dims}`}); ok = false; continue;
    }
    let maxErr = 0, bad = 0, worst = 0;
    for (let i = 0; i < r.data.length; i++) {
      const a = Number(g.data[i]), b = Number(r.data[i]);
      const e = Math.abs(a - b);
      if (!(e <= tol * Math.max(1, Math.abs(b)))) { bad++; if (!(e <= worst)) worst = e; }
      if (e > maxErr || Number.isNaN(e)) maxErr = e;
    }
    const r1 = {name: n, max_abs_err: maxErr, out_of_tolerance: bad};
    if (within) {
      // quantized model: pass also when texel is no further from onnxruntime
      // than onnxruntime's own quantized result is from its float one
      const f = readNpy(path.join(within, n + '.npy'));
      let q = 0;
      for (let i = 0; i < r.data.length && f.data.length === r.data.length; i++)
        q = Math.max(q, Math.abs(Number(r.data[i]) - Number(f.data[i])));
      r1.quantization_err = q;
      if (bad && maxErr <= q) bad = 0;
    }
    res.push(r1);
    if (bad) ok = false;
  }
  console.log(JSON.stringify({ok, tol, outputs: res}));
  process.exit(ok ? 0 : 1);
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'run') run(args[0], args[1], args.slice(2)).catch(e => { console.error(String(e)); process.exit(1); });
else if (cmd === 'ranges') ranges(args[0], args[1], args.slice(2)).catch(e => { console.error(String(e)); process.exit(1); });
else if (cmd === 'compare') {
  const opt = {};
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--tol' || args[i] === '--within') opt[args[i]] = args[++i];
    else rest.push(args[i]);
  }
  compare(rest[0], rest[1], rest.slice(2), opt['--tol'] ? Number(opt['--tol']) : 1e-3, opt['--within']);
} else { console.error('usage: ort_run.js run MODEL OUTDIR NAME=FILE.npy... | ranges MODEL OUT.json NAME=FILE.npy... | compare REFDIR GOTDIR [--tol T] [--within FLOATREF]'); process.exit(2); }
