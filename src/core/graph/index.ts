export { Graph, OPSET, broadcastShapes, numel, type DType, type Shape, type Tensor } from './builder.ts';
export { entropyFromLogp, gelu, indicator, layerNorm, linear, logSoftmax, maskedMean, selectLogprob } from './nn.ts';
export {
  ADAM_DEFAULTS,
  IMITATION_LOSS_DEFAULTS,
  PG_LOSS_DEFAULTS,
  STEP,
  buildPolicyGraph,
  buildTrainStep,
  next,
  ADAM_M,
  ADAM_V,
  type AdamConfig,
  type ImitationLoss,
  type IoSpec,
  type LossSpec,
  type PolicyGradientLoss,
  type TrainStepGraph,
  type TrainStepOptions,
} from './train.ts';
