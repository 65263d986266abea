// MediaPipe BlazeFace around a texel Session: letterboxed NHWC input in
// [-1, 1], the SSD anchors MediaPipe generates for these models, decoding of
// boxes and 6 keypoints, and MediaPipe's weighted non-maximum suppression.
//
// Both models (front 128x128, back 256x256) have 896 anchors in the same
// order: a 16x16 grid with 2 anchors per cell, then an 8x8 grid with 6
// (MediaPipe's SsdAnchorsCalculator with strides [8,16,16,16] resp.
// [16,32,32,32], fixed anchor size, offset 0.5; layers of equal stride share
// cells). Outputs: scores [1,512,1] + [1,384,1] and regressors [1,512,16] +
// [1,384,16] (box center dx, dy, w, h, then 6 keypoints x, y; in input pixels).

export const MODELS = {
  front: { file: 'face_detection_front_128x128.onnx', size: 128, minScore: 0.75 },
  back: { file: 'face_detection_back_256x256.onnx', size: 256, minScore: 0.65 },
};
export const KEYPOINTS = ['right eye', 'left eye', 'nose', 'mouth', 'right ear', 'left ear'];
const IOU = 0.3;

function anchors() {
  const a = [];
  for (const [cells, per] of [[16, 2], [8, 6]])
    for (let y = 0; y < cells; y++)
      for (let x = 0; x < cells; x++)
        for (let k = 0; k < per; k++) a.push([(x + 0.5) / cells, (y + 0.5) / cells]);
  return a;
}
const ANCHORS = anchors();

/**
 * Draws region roi = {x, y, w, h} of `image` letterboxed into a size² canvas
 * and returns the NHWC float input plus the mapping back to image pixels.
 */
export function preprocess(image, roi, size, scratch) {
  scratch.width = scratch.height = size;
  const c = scratch.getContext('2d', { willReadFrequently: true });
  const scale = size / Math.max(roi.w, roi.h);
  const dw = roi.w * scale, dh = roi.h * scale;
  const ox = (size - dw) / 2, oy = (size - dh) / 2;
  c.fillStyle = '#000';
  c.fillRect(0, 0, size, size);
  c.drawImage(image, roi.x, roi.y, roi.w, roi.h, ox, oy, dw, dh);
  const px = c.getImageData(0, 0, size, size).data;
  const input = new Float32Array(size * size * 3);
  for (let i = 0, j = 0; i < px.length; i += 4, j += 3) {
    input[j] = px[i] / 127.5 - 1;
    input[j + 1] = px[i + 1] / 127.5 - 1;
    input[j + 2] = px[i + 2] / 127.5 - 1;
  }
  // model [0, 1] coordinates → image pixels
  const toImage = (u, v) => [roi.x + (u * size - ox) / scale, roi.y + (v * size - oy) / scale];
  return { input, toImage };
}

const sigmoid = (x) => 1 / (1 + Math.exp(-Math.min(Math.max(x, -100), 100)));

function iou(a, b) {
  const ix = Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0));
  const iy = Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
  const inter = ix * iy;
  const u = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter;
  return u > 0 ? inter / u : 0;
}

/**
 * scores: [scores512, scores384], boxes: [boxes512x16, boxes384x16] (Float32Arrays).
 * Returns detections {score, x0, y0, x1, y1, keypoints: [[x, y] x6]} in image pixels.
 */
export function decode(scores, boxes, size, minScore, toImage) {
  const raw = [];
  let n = 0;
  for (let layer = 0; layer < 2; layer++) {
    const s = scores[layer], b = boxes[layer];
    for (let i = 0; i < s.length; i++, n++) {
      const score = sigmoid(s[i]);
      if (score < minScore) continue;
      const [ax, ay] = ANCHORS[n], r = b.subarray(16 * i, 16 * i + 16);
      const cx = ax + r[0] / size, cy = ay + r[1] / size, w = r[2] / size, h = r[3] / size;
      const kp = [];
      for (let k = 0; k < 6; k++) kp.push(ax + r[4 + 2 * k] / size, ay + r[5 + 2 * k] / size);
      raw.push({ score, x0: cx - w / 2, y0: cy - h / 2, x1: cx + w / 2, y1: cy + h / 2, kp });
    }
  }
  // MediaPipe's weighted NMS: overlapping candidates are averaged by score.
  raw.sort((a, b) => b.score - a.score);
  const out = [];
  const used = new Array(raw.length).fill(false);
  for (let i = 0; i < raw.length; i++) {
    if (used[i]) continue;
    const acc = { x0: 0, y0: 0, x1: 0, y1: 0, kp: new Array(12).fill(0) };
    let wsum = 0;
    for (let j = i; j < raw.length; j++) {
      if (used[j] || iou(raw[i], raw[j]) < IOU) continue;
      used[j] = true;
      const d = raw[j], w = d.score;
      for (const k of ['x0', 'y0', 'x1', 'y1']) acc[k] += d[k] * w;
      d.kp.forEach((v, k) => { acc.kp[k] += v * w; });
      wsum += w;
    }
    const [x0, y0] = toImage(acc.x0 / wsum, acc.y0 / wsum);
    const [x1, y1] = toImage(acc.x1 / wsum, acc.y1 / wsum);
    const keypoints = [];
    for (let k = 0; k < 6; k++) keypoints.push(toImage(acc.kp[2 * k] / wsum, acc.kp[2 * k + 1] / wsum));
    out.push({ score: raw[i].score, x0, y0, x1, y1, keypoints });
  }
  return { detections: out, candidates: raw.length };
}
