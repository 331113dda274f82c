/**
 * MLP policy for structured (flattened) observations: obs [B, D] → hidden layers → action
 * logits [B, A], plus an optional linear value head on the last hidden layer (shared trunk,
 * as in CleanRL's discrete PPO with a shared body).
 */
import type { Graph, Tensor } from '../graph/builder.ts';
import { linear } from '../graph/nn.ts';
import type { ModelOutputs, ParamSpec, PolicyModel } from './types.ts';

export interface MlpConfig {
  /** Flattened observation length D. */
  obsDim: number;
  /** Hidden layer widths, input side first. Default [64, 64]. */
  hidden: number[];
  /** Number of discrete actions A. */
  numActions: number;
  /** Hidden nonlinearity. Default 'tanh'. */
  activation: 'tanh' | 'relu';
  /** Add a linear value head V(s) on the last hidden layer. Default false. */
  valueHead: boolean;
  /** Init std multiplier of the policy head (small ⇒ near-uniform initial policy). Default 0.01. */
  policyHeadGain: number;
}

export const MLP_DEFAULTS: Omit<MlpConfig, 'obsDim' | 'numActions'> = {
  hidden: [64, 64],
  activation: 'tanh',
  valueHead: false,
  policyHeadGain: 0.01,
};

export class MlpPolicy implements PolicyModel {
  readonly kind = 'mlp' as const;
  readonly config: MlpConfig;
  readonly params: ParamSpec[] = [];

  constructor(config: Partial<MlpConfig> & Pick<MlpConfig, 'obsDim' | 'numActions'>) {
    this.config = { ...MLP_DEFAULTS, ...config };
    const dims = [this.config.obsDim, ...this.config.hidden];
    const gain = this.config.activation === 'relu' ? Math.SQRT2 : 1;
    for (let i = 0; i < dims.length - 1; i++) {
      this.params.push({ name: `l${i}.w`, shape: [dims[i], dims[i + 1]], init: { kind: 'normal', std: gain / Math.sqrt(dims[i]) }, decay: true });
      this.params.push({ name: `l${i}.b`, shape: [dims[i + 1]], init: { kind: 'zeros' }, decay: false });
    }
    const last = dims[dims.length - 1];
    this.params.push({ name: 'pi.w', shape: [last, this.config.numActions], init: { kind: 'normal', std: this.config.policyHeadGain / Math.sqrt(last) }, decay: true });
    this.params.push({ name: 'pi.b', shape: [this.config.numActions], init: { kind: 'zeros' }, decay: false });
    if (this.config.valueHead) {
      this.params.push({ name: 'v.w', shape: [last, 1], init: { kind: 'normal', std: 1 / Math.sqrt(last) }, decay: true });
      this.params.push({ name: 'v.b', shape: [1], init: { kind: 'zeros' }, decay: false });
    }
  }

  get numActions(): number {
    return this.config.numActions;
  }
  get hasValueHead(): boolean {
    return this.config.valueHead;
  }

  leadShape(batch: number): number[] {
    return [batch];
  }

  declareObservations(g: Graph, batch: number): Record<string, Tensor> {
    return { obs: g.input('obs', [batch, this.config.obsDim]) };
  }

  forward(g: Graph, P: Readonly<Record<string, Tensor>>, obs: Readonly<Record<string, Tensor>>): ModelOutputs {
    let h = obs.obs;
    for (let i = 0; i < this.config.hidden.length; i++) {
      h = linear(g, h, P[`l${i}.w`], P[`l${i}.b`]);
      h = this.config.activation === 'relu' ? g.relu(h) : g.tanh(h);
    }
    const logits = linear(g, h, P['pi.w'], P['pi.b']);
    if (!this.config.valueHead) return { logits };
    const B = h.shape[0];
    return { logits, value: g.reshape(linear(g, h, P['v.w'], P['v.b']), [B]) };
  }
}
