import type * as Ort from 'onnxruntime-web';

/** The parts of an onnxruntime module the session layer uses (onnxruntime-web or -node). */
export interface OrtModule {
  InferenceSession: typeof Ort.InferenceSession;
  Tensor: typeof Ort.Tensor;
}
