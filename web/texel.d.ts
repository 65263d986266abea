// Types for texel.js. The op methods (TensorOps, ContextOps) are generated
// from the engine's op list into texel-ops.d.ts by web/tools/gen-dts.mjs.
import type { ContextOps, OpName, TensorOps } from './texel-ops.js';

export type { OpName } from './texel-ops.js';
export type DType = 'float32' | 'int32';
export type TypedValues = Float32Array | Int32Array;
/** Where a tensor lives and its ops run: a WebGL2 texture or wasm memory (SIMD, threads). */
export type Device = 'gpu' | 'cpu';

/** Engine status codes by name, e.g. Status.CONTEXT_LOST (filled when the engine loads). */
export declare const Status: Readonly<Record<
  | 'OK' | 'INVALID_ARGUMENT' | 'SHAPE_MISMATCH' | 'RANK_TOO_HIGH' | 'DTYPE_MISMATCH'
  | 'STALE_HANDLE' | 'TOO_LARGE' | 'OUT_OF_MEMORY' | 'UNSUPPORTED' | 'GL_ERROR' | 'CONTEXT_LOST'
  | 'DEVICE_MISMATCH',
  number>> & Readonly<Record<string, number>>;

/** Every failure of the engine: `status` is the tx_status, `message` names the op and shapes. */
export declare class TexelError extends Error {
  readonly name: 'TexelError';
  readonly status: number;
  /** e.g. 'TX_STATUS_SHAPE_MISMATCH' */
  readonly statusName: string;
}

export interface CreateOptions {
  /** Canvas to create the WebGL2 context on (default: a canvas of its own, never shown). */
  canvas?: HTMLCanvasElement | OffscreenCanvas;
  /** Identical calls before an op's specialized program is compiled: k > 0, 0 or 'always', 'never'. Default 2.
   *  With k > 0 on a software rasterizer (SwiftShader), a matmul / conv of >= 2^25 multiply-adds is specialized at once;
   *  left at the default there, a smaller draw waits until its calls did 2^25 of work (at most 64 calls). Left at the
   *  default on a GPU without KHR_parallel_shader_compile (Firefox, Safari), the compiles a call does not need yet
   *  take at most a quarter of the wall time, in bursts of at most 50 ms. */
  specializeAfter?: number | 'always' | 'never';
  /** 'f16': tensors stored as RGBA16F (EXT_color_buffer_half_float), half the
   *  texture memory, ~3 significant digits per stored value (caps.float16Storage);
   *  'f32' (default): RGBA32F. */
  precision?: 'f32' | 'f16';
  /** Bytes of live + pooled textures (default 1 GiB). */
  memoryBudget?: number;
  /** Clamp the device's MAX_TEXTURE_SIZE (tests). */
  maxTextureSize?: number;
  /** Print every generated shader to the console. */
  logShaders?: boolean;
  /** data() of a GPU tensor finishes at once, the page waiting as in dataSync, when the
   *  same work (the same draws since the last read, the same size) was read before and
   *  took at most this many ms, and no other read is pending (settled from the next task,
   *  so awaited reads in a loop still let the page paint); any other read is polled
   *  (a fence seen ~1-2 ms late in Chromium), a longer one of seen work until
   *  half this (at most 4 ms) before its last time, then finished at once.
   *  Default 8; 0: always polled. */
  blockingReadMs?: number;
  /** Check GL errors after every op (a synchronous GPU round trip each, ~0.1 ms)
   *  so they name the op; default: errors surface at the next read. */
  debug?: boolean;
  /** Where tx.tensor puts tensors (default 'gpu'). */
  device?: Device;
  /** Threads of the CPU device: 0 (default) one per core; threaded build only. */
  cpuThreads?: number;
  /** 'auto' (default): the threaded build (texel-mt.wasm) on a cross-origin isolated page; true / false force. */
  threads?: boolean | 'auto';
  /** 'auto' (default): wasm SIMD where the browser validates it, else texel-scalar.wasm; true / false force. */
  simd?: boolean | 'auto';
  /** Engine environment knobs for the whole loaded engine, e.g. {TEXEL_AUTO_MEASURE: '1'}; null unsets. */
  env?: Record<string, string | number | null>;
  /** Where texel.wasm lives (default: next to texel.mjs). */
  wasmUrl?: string;
  /** Where texel-mt.wasm lives (default: next to texel-mt.mjs). */
  wasmUrlThreads?: string;
  /** Where texel-scalar.wasm lives (default: next to texel-scalar.mjs). */
  wasmUrlScalar?: string;
}

export interface TensorOptions {
  dtype?: DType;
  /** Default: the context's (CreateOptions.device). */
  device?: Device;
}

export interface LoadModelOptions {
  /** 'auto' (default): the CPU on a software rasterizer, else measured over the first runs and remembered in localStorage. */
  device?: Device | 'auto';
  /** Download bytes as they arrive (total 0: unknown), then GPU programs compiled of those to compile (total 0 on the CPU). */
  onProgress?: (event: LoadProgress) => void;
}

/** loadModel's onProgress events, in order: 'download' (zero or more), then 'compile'. */
export type LoadProgress =
  | { phase: 'download'; loaded: number; total: number }
  | { phase: 'compile'; done: number; total: number };

/** tx_session_stats: the plan and the device choice. */
export interface SessionStats {
  nodes: number;
  steps: number;
  folded: number;
  fused: number;
  weightBytes: number;
  /** Host (wasm) memory the session keeps: the parsed model, float16 weights as halves, and folded constants. */
  hostBytes: number;
  /** The device the last run used (before any: the next one's). */
  device: Device;
  /** The device the next run uses ('auto': its choice once decided); session.device. */
  nextDevice: Device;
  decided: boolean;
  reason: string;
  runsGpu: number;
  runsCpu: number;
  gpuMs: number;
  cpuMs: number;
  /** device values read back mid-run for host paths (data-dependent ops, run-time shapes), over all runs */
  readbacks: number;
  readbackBytes: number;
  /** A GPU session with static input shapes issues its generic programs at load: how long that took. */
  loadCompileMs: number;
}

export interface Caps {
  renderer: string;
  version: string;
  glslVersion: string;
  maxTextureSize: number;
  maxDrawBuffers: number;
  float32Render: boolean;
  float16Render: boolean;
  /** Tensors are stored as RGBA16F (precision: 'f16', or no RGBA32F rendering). */
  float16Storage: boolean;
  parallelCompile: boolean;
  specializeAfter: number;
  /** A context without GL (Node: no WebGL2, or a browser that gave none at the first GPU use): the CPU device only. */
  noGpu: boolean;
  /** The GPU's float division is not IEEE 754 (probed): Div, Mod and Resize
   *  coordinates divide in integer steps, as the CPU device rounds. */
  emulatedDivision: boolean;
  /** The WebGL2 context is still to come: false once caps are read (reading them makes it); true only
   *  in the caps a disposed context kept, if it never made one. */
  glPending: boolean;
}

/** The engine's counters (tx_stats) and the JS wrapper's. */
export interface Stats {
  genericCompiles: number;
  specializedCompiles: number;
  specializedReady: number;
  specializedEvicted: number;
  compileFailures: number;
  cacheHits: number;
  genericRuns: number;
  specializedRuns: number;
  draws: number;
  bytesUploaded: number;
  bytesDownloaded: number;
  liveTextureBytes: number;
  pooledTextureBytes: number;
  peakTextureBytes: number;
  liveTensors: number;
  specializedPrograms: number;
  pooledTextures: number;
  texturesEvicted: number;
  contextLosses: number;
  contextRestores: number;
  /** Ops run by the CPU device. */
  cpuOps: number;
  /** Wasm memory owned by live CPU tensors. */
  liveHostBytes: number;
  peakHostBytes: number;
  /** call signatures called k times or more, still on their generic program, that more calls will specialize */
  specializationsWaiting: number;
  compileMs: number;
  /** The wait for the WebGL2 context and its probes at the first GPU use (0 before, and when made by create()). */
  glStartMs: number;
  /** Compile cost per program family (GLSL template: "matmul", "conv" ...):
   *  programs issued, synchronous compile ms, and the programs' first draws. */
  compileFamilies: Record<string, { generic: number; specialized: number; compileMs: number; firstDrawMs: number }>;
  /** Times the WebGL context was restored after a loss. */
  generation: number;
  /** Tensor objects created and not yet disposed or finalized. */
  jsLiveTensors: number;
  /** Tensors freed by the FinalizationRegistry safety net. */
  jsFinalized: number;
  pendingReads: number;
  /** data() reads finished at once, from the start or after polling (CreateOptions.blockingReadMs). */
  blockingReads: number;
}

export declare class Tensor {
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly size: number;
  readonly rank: number;
  readonly disposed: boolean;
  readonly id: number;
  dispose(): void;
  /** Reads without blocking the page (pixel-pack buffer + fence, polled), except
   *  a read of work seen before (CreateOptions.blockingReadMs): the page waits for
   *  it, or for the last few ms of it. */
  data(): Promise<TypedValues>;
  /** Reads, stalling until the GPU is done. */
  dataSync(): TypedValues;
  arraySync(): unknown;
  /** A view with a new shape (no copy); one dim may be -1. */
  reshape(shape: number[]): Tensor;
  /** Where the tensor lives and its ops run. */
  readonly device: Device;
  /** A copy on `device` (a new tensor). */
  to(device: Device): Tensor;
}
export interface Tensor extends TensorOps {}

/** A graph input or output of a loaded model. */
export interface ValueInfo {
  readonly name: string;
  /** Dims; a dynamic dim is its symbolic name ("batch") or -1; null when the model gives no rank. */
  readonly shape: readonly (number | string)[] | null;
  readonly dtype: DType;
  /** ONNX TensorProto.DataType (1 float, 7 int64 ...); ints and bools run as int32. */
  readonly onnxType: number;
}

export interface RunOptions {
  /** Output names to compute (default: every output, in order). */
  fetches?: string[];
}

/** One step of Session.profileSteps(). */
export interface StepProfile {
  /** The step's ONNX op ("Conv"); the nodes fused into it count in its time. */
  opType: string;
  name: string;
  /** A fused activation ("relu", "hard_swish"), or ''. */
  activation: string;
  runs: number;
  /** Total ms over its timed runs. */
  ms: number;
  draws: number;
  /** Programs compiled during its timed runs (their time includes them). */
  compiles: number;
  /** Its multiply-adds in the last timed run, by the ONNX op's definition (Conv, ConvTranspose, MatMul, Gemm; 0 for other ops). */
  macs: number;
  device: Device;
  /** Its first output's shape in the last timed run (null: none). */
  shape: number[] | null;
}

/** An ONNX model loaded by Context.loadModel. */
export declare class Session {
  readonly inputs: readonly ValueInfo[];
  readonly outputs: readonly ValueInfo[];
  readonly disposed: boolean;
  /** The device the next run uses (after 'auto' decided: its choice). */
  /** Compiles the GPU programs the session needs before its first run (loadModel with onProgress calls it). */
  compile(options?: { onProgress?: (event: LoadProgress) => void }): Promise<{ programs: number }>;
  readonly device: Device;
  /** Why that device: "fixed by the session's desc", "software rasterizer (...)", "measured: ...", "remembered: ...", "trial: ..." (while auto measures). */
  readonly deviceReason: string;
  stats(): SessionStats;
  /** Times every step of the runs that follow (true zeroes the counts; each GPU step is waited for by reading a texel of its output, so those runs are slower); false stops it. */
  profile(on?: boolean): void;
  /** The profile, a step an entry in run order; null while profiling is off. */
  profileSteps(): StepProfile[] | null;
  /** Runs the graph; the outputs are new tensors the caller disposes. Rejects with a TexelError. */
  run(feeds: Record<string, Tensor>, options?: RunOptions): Promise<Record<string, Tensor>>;
  /** The device tensor of initializer `name`, owned by the session (fine-tuning: take its gradient through a run, step on it). Needs device 'gpu' or 'cpu'. */
  weight(name: string): Tensor;
  dispose(): void;
}

export interface LossOptions {
  /** 'mean' (default: sum / sum of weights), 'sum' or 'none'. */
  reduction?: 'mean' | 'sum' | 'none';
  /** float32 [C] class weights. */
  weight?: Tensor;
  /** Labels equal to it weigh 0. */
  ignoreIndex?: number;
}

export interface OptimizerOptions {
  /** Default 0.01 (sgd, momentum), 0.001 (adam, adamw). */
  lr?: number;
  /** Default 0.9. */
  momentum?: number;
  nesterov?: boolean;
  /** Defaults 0.9, 0.999. */
  beta1?: number;
  beta2?: number;
  /** Default 1e-8. */
  epsilon?: number;
  /** L2 (sgd, momentum, adam) or decoupled (adamw); default 0. */
  weightDecay?: number;
}

export declare class Optimizer {
  readonly kind: 'sgd' | 'momentum' | 'adam' | 'adamw';
  /** Updates each param in place from its gradient (same params in the same order each step). */
  step(params: Tensor[], grads: Tensor[]): void;
  /** value = f() under a tape, one step on d sum(value) / d params; returns the value. */
  minimize(f: () => Tensor, params: Tensor[]): Tensor;
  minimize(f: () => Promise<Tensor>, params: Tensor[]): Promise<Tensor>;
  dispose(): void;
}

export declare class Context {
  readonly canvas: HTMLCanvasElement | OffscreenCanvas;
  /** Probed capabilities; reading them makes the WebGL2 context if it is still to come (glMade). */
  readonly caps: Caps;
  /** False until the WebGL2 context is made: create() without device 'gpu', precision 'f16' or a canvas
   *  makes it at the first GPU use (a GPU tensor or op, a session on the GPU, an 'auto' session's second run
   *  unless a worker's look at the GPU kept it on the CPU, reading caps), so that CPU work and an 'auto'
   *  session's first run never wait for it. */
  readonly glMade: boolean;
  readonly lost: boolean;
  readonly ops: { name: string; arity: number; attrs: string[] }[];
  /** True when this context runs the threaded build (texel-mt.wasm). */
  readonly threads: boolean;
  /** False on the build without wasm SIMD (texel-scalar.wasm). */
  readonly simd: boolean;
  tensor(values: TypedValues | number[] | number, shape?: number[], dtype?: DType | TensorOptions): Tensor;
  /** A float32 tensor from half floats: their bit patterns (Uint16Array) or a Float16Array. */
  tensor(values: Uint16Array | ArrayBufferView, shape: number[] | undefined, dtype: 'float16' | { dtype: 'float16'; device?: Device }): Tensor;
  zeros(shape: number[], dtype?: DType): Tensor;
  /** Any op by name: run('matmul', [a, b], { transposeB: true }). */
  run(op: OpName, inputs: (Tensor | number)[], attrs?: Record<string, unknown>): Tensor;
  /** Disposes the tensors fn creates, except those it returns. fn must be synchronous. */
  scope<T>(fn: () => T): T;
  /** Lets t survive the open scopes. */
  keep<T extends Tensor>(t: T): T;
  /** A tensor no scope disposes: a trainable parameter. */
  variable(values: Tensor | TypedValues | number[], shape?: number[], dtype?: DType): Tensor;
  /** (...args) => {value, grads}: the gradients of sum(f(...args)) for each Tensor argument (ops recorded on a tape). */
  valueAndGrad<A extends unknown[]>(f: (...args: A) => Tensor): (...args: A) => { value: Tensor; grads: Tensor[] };
  valueAndGrad<A extends unknown[]>(f: (...args: A) => Promise<Tensor>): (...args: A) => Promise<{ value: Tensor; grads: Tensor[] }>;
  /** (...args) => the gradient (one Tensor argument) or gradients of sum(f(...args)). */
  grad<A extends unknown[]>(f: (...args: A) => Tensor): (...args: A) => Tensor | Tensor[];
  softmaxCrossEntropy(scores: Tensor, labels: Tensor, options?: LossOptions): Tensor;
  nllLoss(logProb: Tensor, labels: Tensor, options?: LossOptions): Tensor;
  mseLoss(a: Tensor, b: Tensor, options?: { reduction?: 'mean' | 'sum' | 'none' }): Tensor;
  optimizer(kind: 'sgd' | 'momentum' | 'adam' | 'adamw', options?: OptimizerOptions): Optimizer;
  stats(): Stats;
  /** Loads an ONNX model (bytes or a URL to fetch); weights are uploaded once and again after a context restore. */
  loadModel(source: ArrayBuffer | ArrayBufferView | string | URL, options?: LoadModelOptions): Promise<Session>;
  finish(): void;
  trim(): void;
  /** After your own drawing on the WebGL context texel uses (create({canvas})): sets texel's state again and forgets its cached bindings; call before the next texel call. */
  resetGLState(): void;
  on(event: 'contextlost', fn: (err: TexelError) => void): () => void;
  on(event: 'contextrestored', fn: (info: { generation: number }) => void): () => void;
  dispose(): void;
}
export interface Context extends ContextOps {}

export declare function create(options?: CreateOptions): Promise<Context>;
/** True where the threaded build can run (SharedArrayBuffer on a cross-origin isolated page). */
export declare function threadsAvailable(): boolean;
/** True where the browser runs wasm SIMD. */
export declare function simdAvailable(): boolean;
/** Forgets the 'auto' device decisions and the measured kernel choices
 *  (env TEXEL_TUNE) this origin remembered (localStorage). */
export declare function forgetDeviceChoices(): void;

declare const texel: {
  create: typeof create;
  Status: typeof Status;
  TexelError: typeof TexelError;
  Tensor: typeof Tensor;
  Context: typeof Context;
  Session: typeof Session;
  Optimizer: typeof Optimizer;
  threadsAvailable: typeof threadsAvailable;
  simdAvailable: typeof simdAvailable;
  forgetDeviceChoices: typeof forgetDeviceChoices;
};
export default texel;
