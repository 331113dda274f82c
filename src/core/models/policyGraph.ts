import { Graph } from '../graph/builder.ts';
import { logSoftmax } from '../graph/nn.ts';
import { declareParams, type PolicyModel } from './types.ts';

/**
 * The rollout/scoring graph from the same model definition: observations → `logprobs`
 * [...lead, A] (full log-softmax) and `value` [...lead] when there is a value head.
 */
export function buildPolicyGraph(model: PolicyModel, batch: number, seqLen?: number): Graph {
  const g = new Graph(`policy_${model.kind}`);
  const P = declareParams(g, model);
  const obs = model.declareObservations(g, batch, seqLen);
  const out = model.forward(g, P, obs);
  g.output(logSoftmax(g, out.logits), 'logprobs');
  if (out.value) g.output(out.value, 'value');
  return g;
}
