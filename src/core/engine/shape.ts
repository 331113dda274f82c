/**
 * What a run will ask of its engine, as one small workload to time: the run's own model and
 * train-step options, the rollout's inference batch, and rough call counts per iteration, so a
 * measured ms per call turns into an estimated ms per iteration.
 *
 * The counts are estimates on purpose (episode lengths are only known once training runs); they
 * weigh train steps against rollout calls, which is what decides between a GPU (high latency per
 * call, cheap big matmuls) and the CPU (no dispatch cost, slower arithmetic).
 */
import { GROUP_ALGOS } from '../algos/config.ts';
import { algoDescriptor } from '../algos/registry/index.ts';
import { makeEnv } from '../envs/index.ts';
import type { TrainStepOptions } from '../update/trainStep.ts';
import type { PolicyModel } from '../models/types.ts';
import type { RunConfig } from '../presets/schema.ts';
import { trainStepOptions } from '../update/hyper.ts';
import { buildPoolModel, gridMlpSpec } from '../rollout/stepPool.ts';
import { makeTokenModel } from '../models/transformer.ts';

export interface ProbeShape {
  /** Stable text naming everything that changes the timings: model dims, batches, who rolls out. */
  key: string;
  /** Short human label, e.g. 'MLP 160→64→64→7 (15k params)'. */
  label: string;
  model: PolicyModel;
  train: TrainStepOptions;
  /** Positions per training sequence (token models); undefined for the MLP. */
  seqLen?: number;
  /** Rollout inference: one MLP forward over `rows` observations of `obsDim` features, or one KV-cached token for each of `rows` rows. */
  rollout: { kind: 'policy'; rows: number; obsDim: number } | { kind: 'decode'; rows: number };
  /** Estimated train steps per iteration (passes × minibatches). */
  trainStepsPerIteration: number;
  /**
   * Estimated rollout calls per iteration on this engine: 0 when rollouts run in separate
   * workers (they use their own WASM engine whatever the learner picks).
   */
  rolloutCallsPerIteration: number;
}

/** Parameters in a model (for labels). */
function paramCount(model: PolicyModel): number {
  let n = 0;
  for (const p of model.params) n += p.shape.reduce((a, b) => a * b, 1);
  return n;
}

function compact(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${Math.round(n / 1e3)}k` : String(n);
}

/** The workload a run config puts on its learner's engine. */
export function probeShapeFor(config: RunConfig): ProbeShape {
  const { algo, rollout } = config;
  const rows = GROUP_ALGOS.includes(algo.algo) ? rollout.groups * algo.groupSize : rollout.episodes;
  const trainStepsPerIteration = Math.max(1, algo.updateEpochs * algo.minibatches);
  const critic = algoDescriptor(algo.algo).critic;
  const env = makeEnv(config.env.id, config.env.kwargs);
  if (config.model.kind === 'mlp') {
    const spec = gridMlpSpec(config.env, { hidden: config.model.hidden, activation: config.model.activation, valueHead: critic }, config.model.agents ?? 'shared');
    const model = buildPoolModel(spec);
    const towers = spec.config.towers === 2 ? ' ×2 towers' : '';
    const dims = [spec.config.obsDim, ...(config.model.hidden ?? []), spec.config.numActions].join('→') + towers;
    return {
      key: `mlp ${dims} ${config.model.activation}${critic ? '+v' : ''} | learn ${rollout.learnerBatch} | roll ${rollout.workers > 0 ? 'workers' : rows}`,
      label: `MLP ${dims} (${compact(paramCount(model))} params)`,
      model,
      train: trainStepOptions(algo, rollout.learnerBatch),
      rollout: { kind: 'policy', rows, obsDim: spec.config.obsDim },
      trainStepsPerIteration,
      // Lockstep rollout: one batched call per env step, up to the env's time limit.
      rolloutCallsPerIteration: rollout.workers > 0 ? 0 : env.spec.maxSteps,
    };
  }
  const m = config.model;
  const model = makeTokenModel(m, critic);
  const decodeRows = Math.max(1, rollout.kvRows > 0 ? Math.min(rollout.kvRows, rows) : rows);
  return {
    key: `transformer d${m.dModel} L${m.nLayers} h${m.nHeads} ff${m.dFF} ctx${m.context} | learn ${rollout.learnerBatch} | roll ${rollout.workers > 0 ? 'workers' : decodeRows}`,
    label: `transformer d ${m.dModel} × ${m.nLayers} layers, context ${m.context} (${compact(paramCount(model))} params)`,
    model,
    train: trainStepOptions(critic ? algo : { ...algo, valueCoef: 0 }, rollout.learnerBatch),
    seqLen: m.context,
    rollout: { kind: 'decode', rows: decodeRows },
    trainStepsPerIteration,
    // Roughly one decode call per sampled token of a turn, a few turns per episode.
    rolloutCallsPerIteration: rollout.workers > 0 ? 0 : rollout.maxActionTokens * Math.min(env.spec.maxSteps, 4),
  };
}
