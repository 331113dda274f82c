/**
 * Vector observations (a Box of floats) for code envs: the shipped CartPole against an
 * independent transcription of Gymnasium's CartPole-v1, the check's faults at their lines, and the
 * step pool carrying the floats to the MLP unchanged.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCodeEnv, makeCodeEnv } from '../../core/envs/code/index.ts';
import { runExpert } from '../../core/envs/checkEnv.ts';
import { whyNotContained } from '../../core/envs/spaces.ts';
import type { VectorObs } from '../../core/envs/types.ts';
import { initWeights } from '../../core/models/types.ts';
import { buildPoolModel, gridMlpSpec, SerialRolloutPool } from '../../core/rollout/stepPool.ts';
import { stepFeatures, stepStateKeys } from '../../core/rollout/stepEpisode.ts';
import { Rng } from '../../core/util/rng.ts';
import { loadNodeEngine } from '../engine/node.ts';
import { loadCodeEnvs } from './index.ts';

const CARTPOLE = readFileSync(new URL('../../../examples/envs/cartpole.js', import.meta.url), 'utf8');
const lineOf = (code: string, text: string) => code.split('\n').findIndex((l) => l.includes(text)) + 1;

beforeAll(() => loadCodeEnvs());

/**
 * Gymnasium's CartPole-v1 step (gymnasium/envs/classic_control/cartpole.py, euler integrator),
 * transcribed on its own: state in, next state out, in float64.
 */
function gymStep(s: readonly number[], action: number): number[] {
  const [x, xDot, theta, thetaDot] = s;
  const gravity = 9.8, masscart = 1.0, masspole = 0.1, total = masspole + masscart, length = 0.5, pml = masspole * length, forceMag = 10.0, tau = 0.02;
  const force = action === 1 ? forceMag : -forceMag;
  const costheta = Math.cos(theta), sintheta = Math.sin(theta);
  const temp = (force + pml * thetaDot ** 2 * sintheta) / total;
  const thetaacc = (gravity * sintheta - costheta * temp) / (length * (4.0 / 3.0 - (masspole * costheta ** 2) / total));
  const xacc = temp - (pml * thetaacc * costheta) / total;
  return [x + tau * xDot, xDot + tau * xacc, theta + tau * thetaDot, thetaDot + tau * thetaacc];
}
const gymTerminated = (s: readonly number[]) => s[0] < -2.4 || s[0] > 2.4 || s[2] < -(12 * 2 * Math.PI) / 360 || s[2] > (12 * 2 * Math.PI) / 360;

const vec = (o: unknown) => Array.from((o as VectorObs).vector);

describe('vector observations (code envs)', () => {
  it('the CartPole example steps as Gymnasium CartPole-v1: same states (float32), +1 a step, the same ends, truncation at 500', () => {
    const env = makeCodeEnv({ code: CARTPOLE });
    const rng = new Rng(11);
    let truncations = 0;
    for (let ep = 0; ep < 30; ep++) {
      const first = vec(env.reset({ seed: ep }).obs);
      // Gymnasium's reset: each state variable uniform in [-0.05, 0.05].
      for (const v of first) expect(Math.abs(v)).toBeLessThanOrEqual(0.05);
      // The reference continues from the float32 observation (the module keeps float64, so compare within float32's rounding).
      let s = first;
      // A steadying controller on half the episodes, so some run to the 500-step limit.
      const steady = ep % 2 === 0;
      for (let t = 1; t <= 500; t++) {
        const a = steady ? (s[2] + 0.5 * s[3] + 0.01 * s[0] + 0.1 * s[1] > 0 ? 1 : 0) : rng.int(0, 2);
        const want = gymStep(s, a);
        const r = env.step(a);
        const got = vec(r.obs);
        for (let i = 0; i < 4; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-4 * (1 + t / 10));
        expect(r.reward).toBe(1);
        expect(r.terminated).toBe(gymTerminated(got));
        expect(r.truncated).toBe(!r.terminated && t === 500);
        s = got;
        if (r.terminated || r.truncated) {
          expect(r.info.success).toBe(r.truncated);
          truncations += r.truncated ? 1 : 0;
          break;
        }
      }
    }
    expect(truncations).toBeGreaterThan(0);
  });

  it('declares a Box (shape [4], per-element bounds), passes the check, and its expert keeps the pole up where random play drops it', () => {
    const check = checkCodeEnv(CARTPOLE);
    expect(check.problems).toEqual([]);
    const space = check.spec!.observationSpace;
    expect(space.kind === 'dict' && space.spaces.vector).toMatchObject({ kind: 'box', shape: [4], dtype: 'float32', perElement: { low: [-4.8, -Infinity, -0.41887903, -Infinity], high: [4.8, Infinity, 0.41887903, Infinity] } });
    expect(whyNotContained(space, { vector: new Float32Array([5, 0, 0, 0]) }, 'obs')).toBe('obs.vector[0] = 5 is outside [-4.8, 4.8]');
    expect(whyNotContained(space, { vector: new Float32Array([0, NaN, 0, 0]) }, 'obs')).toMatch(/^obs\.vector\[1\] = NaN is outside/);
    const env = makeCodeEnv({ code: CARTPOLE });
    const expert = Array.from({ length: 20 }, (_, k) => runExpert(env, 100 + k));
    expect(expert.every((r) => r.success && r.steps === 500)).toBe(true);
    const rng = new Rng(3);
    let steps = 0;
    for (let ep = 0; ep < 20; ep++) {
      env.reset({ seed: 100 + ep });
      for (;;) {
        steps++;
        const r = env.step(rng.int(0, 2));
        if (r.terminated || r.truncated) break;
      }
    }
    expect(steps / 20).toBeLessThan(60);
  });

  it('the host refuses bad vectors and bad declarations at their line: wrong length, NaN, out of bounds, bounds of the wrong size', () => {
    const at = (code: string) => checkCodeEnv(code).problems;
    const nanStep = CARTPOLE.replace('const observe = () => [x, xDot, theta, thetaDot];', 'const observe = () => [x, steps === 3 ? NaN : xDot, theta, thetaDot];');
    expect(at(nanStep)).toEqual([{ line: lineOf(nanStep, 'export function step'), rule: 'contract', message: expect.stringMatching(/^step\(\) returned a bad observation: observation\[1\] \(cart velocity\) is not a finite number \(NaN or Infinity\); every element must be a finite number/) }]);
    const short = CARTPOLE.replace('const observe = () => [x, xDot, theta, thetaDot];', 'const observe = () => [x, xDot, theta];');
    expect(at(short)[0]).toMatchObject({ line: lineOf(short, 'export function reset'), rule: 'contract', message: expect.stringContaining('reset() returned a bad observation: the observation has 3 numbers; shape [4] needs 4 (flat, row-major)') });
    const outside = CARTPOLE.replace('low: [-4.8,', 'low: [-0.01,');
    expect(at(outside)[0]).toMatchObject({ rule: 'contract', message: expect.stringMatching(/observation\[0\] \(cart position\) = -?[\d.e-]+ is outside \[-0\.01, 4\.8\]/) });
    const badDecl = CARTPOLE.replace('high: [4.8, Infinity, 0.41887903, Infinity],', 'high: [4.8, Infinity],');
    expect(at(badDecl)).toEqual([{ line: lineOf(badDecl, 'export const env'), rule: 'contract', message: expect.stringContaining('env.observation.high: high has 2 numbers; shape [4] needs 4 (or one number for all)') }]);
  });

  it('the step pool hands the MLP the vectors as they are: obsDim = 4, features equal the observations, one state key per distinct vector', async () => {
    const env = { id: 'code/custom', kwargs: { code: CARTPOLE } };
    const spec = gridMlpSpec(env, { hidden: [16] });
    expect(spec.config).toMatchObject({ obsDim: 4, numActions: 2 });
    const pool = new SerialRolloutPool({ engine: await loadNodeEngine('ort-web-wasm'), model: spec, weights: initWeights(buildPoolModel(spec), 1) });
    try {
      const { episodes } = await pool.collect({ env, seeds: [1, 2, 3], groups: [-1, -1, -1], samplingSeed: 4, keepObservations: true });
      for (const ep of episodes) {
        const T = ep.actions.length;
        expect(ep.vectors).toHaveLength(T * 4);
        expect(ep.images).toHaveLength(0);
        const got = new Float32Array(T * 4);
        for (let t = 0; t < T; t++) stepFeatures(ep, t, got, t * 4);
        expect(Array.from(got)).toEqual(ep.observations!.slice(0, T).flatMap(vec));
        // Each episode is replayed from its seed by the env itself: the same vectors.
        const replay = makeCodeEnv({ code: CARTPOLE });
        const want = [vec(replay.reset({ seed: ep.seed }).obs)];
        for (let t = 0; t < T - 1; t++) want.push(vec(replay.step(ep.actions[t]).obs));
        expect(Array.from(got)).toEqual(want.flat());
        expect(new Set(stepStateKeys(ep)).size).toBe(T);
      }
    } finally {
      await pool.close();
    }
  });
});
