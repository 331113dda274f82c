/**
 * MLP policy for structured (flattened) observations: obs [B, D] → hidden layers → action
 * logits [B, A], plus an optional linear value head on the last hidden layer (shared trunk,
 * as in CleanRL's discrete PPO with a shared body).
 *
 * Two towers (`towers: 2`, for two-agent envs with separate policies): two such networks with
 * no shared parameters, and one observation feature (`towerFeature`, 1 on the second agent's
 * steps, 0 on the first's) selects whose logits and value are the output:
 * out = (1 − s)·tower0 + s·tower1. The gradient reaching a tower is its output gradient times
 * its selector, so a row of one agent gives the other tower exactly zero gradient. Tower 0's
 * parameters keep the one-tower names (`l0.w` …); tower 1's are prefixed `t1.`.
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
  /** 1 = one network (default); 2 = two networks without shared parameters, picked per row by `towerFeature`. */
  towers: 1 | 2;
  /** With 2 towers: index into obs of the feature that is 1 on rows of tower 1 (the second agent) and 0 on tower 0's. */
  towerFeature: number;
}

export const MLP_DEFAULTS: Omit<MlpConfig, 'obsDim' | 'numActions'> = {
  hidden: [64, 64],
  activation: 'tanh',
  valueHead: false,
  policyHeadGain: 0.01,
  towers: 1,
  towerFeature: -1,
};

/** Parameter-name prefix of tower `k` (tower 0 keeps the one-tower names). */
export function towerPrefix(k: number): string {
  return k === 0 ? '' : `t${k}.`;
}

export class MlpPolicy implements PolicyModel {
  readonly kind = 'mlp' as const;
  readonly config: MlpConfig;
  readonly params: ParamSpec[] = [];

  constructor(config: Partial<MlpConfig> & Pick<MlpConfig, 'obsDim' | 'numActions'>) {
    this.config = { ...MLP_DEFAULTS, ...config };
    const { towers, towerFeature, obsDim } = this.config;
    if (towers !== 1 && towers !== 2) throw new RangeError(`MlpPolicy: towers must be 1 or 2, got ${String(towers)}`);
    if (towers === 2 && !(Number.isInteger(towerFeature) && towerFeature >= 0 && towerFeature < obsDim)) {
      throw new RangeError(`MlpPolicy: two towers need towerFeature, an observation index in 0..${obsDim - 1}; got ${towerFeature}`);
    }
    const dims = [obsDim, ...this.config.hidden];
    const gain = this.config.activation === 'relu' ? Math.SQRT2 : 1;
    for (let k = 0; k < towers; k++) {
      const p = towerPrefix(k);
      for (let i = 0; i < dims.length - 1; i++) {
        this.params.push({ name: `${p}l${i}.w`, shape: [dims[i], dims[i + 1]], init: { kind: 'normal', std: gain / Math.sqrt(dims[i]) }, decay: true });
        this.params.push({ name: `${p}l${i}.b`, shape: [dims[i + 1]], init: { kind: 'zeros' }, decay: false });
      }
      const last = dims[dims.length - 1];
      this.params.push({ name: `${p}pi.w`, shape: [last, this.config.numActions], init: { kind: 'normal', std: this.config.policyHeadGain / Math.sqrt(last) }, decay: true });
      this.params.push({ name: `${p}pi.b`, shape: [this.config.numActions], init: { kind: 'zeros' }, decay: false });
      if (this.config.valueHead) {
        this.params.push({ name: `${p}v.w`, shape: [last, 1], init: { kind: 'normal', std: 1 / Math.sqrt(last) }, decay: true });
        this.params.push({ name: `${p}v.b`, shape: [1], init: { kind: 'zeros' }, decay: false });
      }
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
    if (this.config.towers === 1) return this.tower(g, P, obs.obs, '');
    const f = this.config.towerFeature;
    const s1 = g.slice(obs.obs, 1, f, f + 1); // [B, 1]: 1 on tower 1's rows
    const s0 = g.sub(1, s1);
    const t0 = this.tower(g, P, obs.obs, towerPrefix(0));
    const t1 = this.tower(g, P, obs.obs, towerPrefix(1));
    const logits = g.add(g.mul(t0.logits, s0), g.mul(t1.logits, s1));
    if (!t0.value || !t1.value) return { logits };
    const B = obs.obs.shape[0];
    const v = (t: Tensor, s: Tensor) => g.mul(g.reshape(t, [B, 1]), s);
    return { logits, value: g.reshape(g.add(v(t0.value, s0), v(t1.value, s1)), [B]) };
  }

  private tower(g: Graph, P: Readonly<Record<string, Tensor>>, x: Tensor, p: string): ModelOutputs {
    let h = x;
    for (let i = 0; i < this.config.hidden.length; i++) {
      h = linear(g, h, P[`${p}l${i}.w`], P[`${p}l${i}.b`]);
      h = this.config.activation === 'relu' ? g.relu(h) : g.tanh(h);
    }
    const logits = linear(g, h, P[`${p}pi.w`], P[`${p}pi.b`]);
    if (!this.config.valueHead) return { logits };
    const B = h.shape[0];
    return { logits, value: g.reshape(linear(g, h, P[`${p}v.w`], P[`${p}v.b`]), [B]) };
  }
}
