// Compiled (never run) by `tsc -p web/test/tsconfig.json` in scripts/test.sh:
// texel.d.ts and the generated texel-ops.d.ts must describe the API as used.
import * as texel from '../texel.js';
import type { Context, LoadProgress, Optimizer, Session, Stats, Tensor, ValueInfo } from '../texel.js';

export async function use(): Promise<number> {
  const tx: Context = await texel.create({ specializeAfter: 'never', debug: true });
  const a: Tensor = tx.tensor(new Float32Array(6), [2, 3]);
  const b = tx.tensor([1, 2, 3]);
  const h: Tensor = tx.tensor(new Uint16Array([0x3c00, 0x4000]), [2], 'float16');
  h.add(tx.tensor(new Uint16Array(2), undefined, { dtype: 'float16', device: 'cpu' }));
  const y = tx.scope(() => a.add(b).relu().mul(2).clip(0, 6).clip({ hi: 3 }));
  const m = a.matmul(tx.tensor(new Float32Array(12), [3, 4]), { transposeB: false, bias: b, activation: 'relu' });
  const z = tx.matmul(a, a, { transposeB: true });
  const r = tx.run('max', [a, 0]);
  const v: Float32Array | Int32Array = await y.data();
  const s: Stats = tx.stats();
  const off = tx.on('contextrestored', (info) => info.generation);
  off();
  try {
    a.add(tx.tensor(Int32Array.from([1])));
  } catch (e) {
    if (e instanceof texel.TexelError && e.status === texel.Status.DTYPE_MISMATCH) console.log(e.statusName);
  }
  const session: Session = await tx.loadModel(new ArrayBuffer(8));
  const info: ValueInfo = session.inputs[0];
  const dim: number | string | undefined = info.shape?.[0];
  const outs: Record<string, Tensor> = await session.run({ [info.name]: a }, { fetches: ['y'] });
  outs.y.dispose();
  session.dispose();
  await tx.loadModel('/model.onnx');
  const cpu: Session = await tx.loadModel(new ArrayBuffer(8), { device: 'auto' });
  await tx.loadModel('/model.onnx', {
    onProgress: (e: LoadProgress) => {
      const f: number = e.phase === 'download' ? e.loaded / (e.total || 1) : e.done / (e.total || 1);
      void f;
    },
  });
  const compiled: { programs: number } = await cpu.compile({ onProgress: (e) => void e.phase });
  void compiled;
  const why: string = cpu.deviceReason;
  const dev: 'gpu' | 'cpu' = cpu.device;
  const onCpu: Tensor = tx.tensor([1, 2], [2], { device: 'cpu' }).to('gpu');
  console.log(why, dev, onCpu.device, cpu.stats().runsCpu, tx.stats().cpuOps, tx.threads);
  console.log(dim);
  for (const t of [a, b, y, m, z, r]) t.dispose();
  return v.length + s.liveTextureBytes + y.shape[0];
}

export async function training(tx: Context, x: Tensor, labels: Tensor, session: Session): Promise<number> {
  const w: Tensor = tx.variable(new Float32Array(12), [3, 4]);
  const opt: Optimizer = tx.optimizer('adam', { lr: 0.01, weightDecay: 0.1 });
  const loss: Tensor = opt.minimize(() => tx.softmaxCrossEntropy(x.matmul(w), labels, { reduction: 'mean' }), [w]);
  const { value, grads } = tx.valueAndGrad((a: Tensor) => tx.mseLoss(a, x))(w);
  const g = tx.grad((a: Tensor) => tx.nllLoss(a, labels, { ignoreIndex: -1 }))(w);
  const W: Tensor = session.weight('W');
  const fine = await tx.valueAndGrad(async (p: Tensor) => (await session.run({ x }))['y'].mul(p))(W);
  opt.step([w], grads);
  for (const t of [loss, value, ...grads, ...(Array.isArray(g) ? g : [g]), fine.value, ...fine.grads]) t.dispose();
  opt.dispose();
  return opt.kind.length;
}

// @ts-expect-error: relu takes no tensor argument
export const bad = (t: Tensor) => t.relu(t);
