import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../core/envs/index.ts';
import emptyPreset from '../../../presets/grid-empty-8x8-grpo.json';
import ppoPreset from '../../../presets/grid-door-key-ppo.json';
import calcPreset from '../../../presets/calc-grpo.json';
import pipelinePreset from '../../../presets/grid-door-key-pipeline.json';
import calcDistillPreset from '../../../presets/calc-distill.json';
import { FIELDS } from './fields.ts';
import { changedFields, draftFromHash, draftFromPreset, formatTrainHash, isLiveChange, isTrainHash, liveHyper, loadPresets, parseTrainHash, setField, validate } from './config.ts';

const { presets, problems } = loadPresets([ppoPreset, emptyPreset]);

describe('presets', () => {
  it('resolve, and the empty-room GRPO preset comes first', () => {
    expect(problems).toEqual([]);
    expect(presets.map((p) => p.id)).toEqual(['grid-empty-8x8-grpo', 'grid-door-key-ppo']);
    expect(presets[0].config.algo.clipHigh).toBe(0.28); // a default filled in
  });
  it('every preset on disk loads, and the starter opens first even where another id sorts before it', () => {
    const all = loadPresets(readdirSync('presets').map((f) => JSON.parse(readFileSync(`presets/${f}`, 'utf8')) as unknown));
    expect(all.problems).toEqual([]);
    expect(all.presets[0].id).toBe('grid-empty-8x8-grpo');
    expect(all.presets.map((p) => p.id)).toContain('grid-empty-8x8-cispo');
  });
  it('a broken preset is reported by id, not thrown', () => {
    const r = loadPresets([{ ...emptyPreset, id: 'bad', algo: { algo: 'grpo', lr: -1 } }]);
    expect(r.presets).toEqual([]);
    expect(r.problems[0]).toMatch(/^preset bad: algo\.lr: must be > 0/);
  });
});

describe('validation', () => {
  const d = draftFromPreset(presets[0], 'wasm');
  it('files each message under its form field', () => {
    const v = validate(setField(d, 'algo.lr', -0.1));
    if (v.ok) throw new Error('expected lr < 0 to be rejected');
    expect(v.byField['algo.lr']).toEqual(['must be > 0 (got -0.1)']);
    const w = validate(setField(d, 'model.hidden', [64, 0]));
    if (w.ok) throw new Error('expected a 0-wide layer to be rejected');
    expect(Object.keys(w.byField)).toEqual(['model.hidden']);
    expect(w.other).toEqual([]);
  });
  it('switching algorithm takes its defaults but keeps the tuned knobs', () => {
    const ppo = setField(setField(d, 'algo.lr', 0.002), 'algo.algo', 'ppo');
    expect(ppo.algo.updateEpochs).toBe(4);
    expect(ppo.algo.normalizeStd).toBe(false);
    expect(ppo.algo.lr).toBe(0.002);
    expect(validate(ppo).ok).toBe(true);
  });
});

describe('live vs restart', () => {
  const d = draftFromPreset(presets[0], 'wasm');
  it('lr is live; group size restarts; KL from 0 restarts, between non-zero values is live', () => {
    expect(isLiveChange(d, setField(d, 'algo.lr', 0.01), 'algo.lr')).toBe(true);
    expect(isLiveChange(d, setField(d, 'algo.groupSize', 4), 'algo.groupSize')).toBe(false);
    expect(isLiveChange(d, setField(d, 'algo.klCoef', 0.1), 'algo.klCoef')).toBe(false);
    const withKl = setField(d, 'algo.klCoef', 0.1);
    expect(isLiveChange(withKl, setField(withKl, 'algo.klCoef', 0.2), 'algo.klCoef')).toBe(true);
  });
});

describe('reward weights and token-policy fields', () => {
  const grid = draftFromPreset(presets[0], 'wasm');
  const calc = draftFromPreset(loadPresets([calcPreset]).presets[0], 'wasm');
  const shown = (d: typeof grid) => FIELDS.filter((f) => !f.when || f.when(d)).map((f) => f.path);
  it('shaping weights are live and reach setHyper; the potential term is live only while it stays on', () => {
    const edited = setField(calc, 'shaping.format.weight', 0.5);
    expect(isLiveChange(calc, edited, 'shaping.format.weight')).toBe(true);
    expect(liveHyper(edited).rewardWeights).toEqual({ outcome: 1, progress: 0, format: 0.5, toolCost: 0, length: 0, potential: 0 });
    expect(isLiveChange(grid, setField(grid, 'shaping.potential.weight', 0.1), 'shaping.potential.weight')).toBe(false);
    const on = setField(grid, 'shaping.potential.weight', 0.1);
    expect(isLiveChange(on, setField(on, 'shaping.potential.weight', 0.2), 'shaping.potential.weight')).toBe(true);
    expect(isLiveChange(calc, setField(calc, 'model.dModel', 32), 'model.dModel')).toBe(false);
  });
  it('the form follows the policy kind: transformer sizes, warm start and tool terms for tool envs only', () => {
    expect(shown(calc)).toEqual(expect.arrayContaining(['model.dModel', 'model.nLayers', 'model.nHeads', 'model.dFF', 'model.context', 'warmStart.steps', 'shaping.format.weight', 'rollout.maxActionTokens']));
    expect(shown(calc)).not.toContain('model.hidden');
    expect(shown(calc)).not.toContain('shaping.potential.weight');
    expect(shown(grid)).not.toContain('model.dModel');
    expect(shown(grid)).not.toContain('warmStart.steps');
    expect(shown(grid)).toContain('shaping.potential.weight');
  });
  it("the algorithm select lists the registry's algorithms, group ones first; γ, λ and ω show for the algorithms that read them", () => {
    const select = FIELDS.find((f) => f.path === 'algo.algo')!.input;
    expect(select.kind === 'select' && select.options.map((o) => o.value)).toEqual(['grpo', 'drgrpo', 'rloo', 'cispo', 'gspo', 'gigpo', 'remax', 'reinforcepp', 'mt-grpo', 'sapo', 'gmpo', 'dapo', 'reinforce', 'ppo']);
    expect(select.kind === 'select' && select.options.find((o) => o.value === 'reinforcepp')!.label).toMatch(/REINFORCE\+\+/);
    const as = (algo: string) => shown(setField(grid, 'algo.algo', algo));
    expect(['ppo', 'gigpo', 'grpo', 'reinforcepp'].map((a) => ['algo.gamma', 'algo.lambda', 'algo.stepAdvantageWeight', 'algo.groupSize'].filter((p) => as(a).includes(p)))).toEqual([
      ['algo.gamma', 'algo.lambda'],
      ['algo.gamma', 'algo.stepAdvantageWeight', 'algo.groupSize'],
      ['algo.groupSize'],
      ['algo.groupSize'],
    ]);
    // MT-GRPO's λ and turn-reward source show for it alone.
    const turn = (a: string) => as(a).filter((p) => p.startsWith('algo.turnCredit.'));
    expect([turn('mt-grpo'), turn('grpo'), turn('gigpo')]).toEqual([['algo.turnCredit.lambda', 'algo.turnCredit.source'], [], []]);
    // SAPO's gate temperatures show for it alone; the covariance control and DAPO's length controls for every algorithm.
    const tau = (a: string) => as(a).filter((p) => p.startsWith('algo.sapo.'));
    expect([tau('sapo'), tau('grpo')]).toEqual([['algo.sapo.tauPos', 'algo.sapo.tauNeg'], []]);
    for (const a of ['grpo', 'ppo', 'sapo']) expect(as(a)).toEqual(expect.arrayContaining(['algo.covariance.mode', 'algo.overlong.enabled', 'algo.maskTruncated']));
    // Picking DAPO in the form turns its length controls on; picking GRPO after it turns them off.
    const dapo = setField(grid, 'algo.algo', 'dapo');
    expect([dapo.algo.overlong.enabled, dapo.algo.maskTruncated]).toEqual([true, true]);
    const back = setField(dapo, 'algo.algo', 'grpo');
    expect([back.algo.overlong.enabled, back.algo.maskTruncated]).toEqual([false, false]);
  });
  it("the agents choice is a policy field; 'separate' on a one-agent env is filed under it", () => {
    expect(shown(grid)).toContain('model.agents');
    expect(shown(calc)).not.toContain('model.agents');
    expect(grid.model.kind === 'mlp' && grid.model.agents).toBe('shared');
    const v = validate(setField(grid, 'model.agents', 'separate'));
    expect(v.ok ? null : v.byField['model.agents']?.[0]).toMatch(/two-agent env .* grid\/empty-8x8 has one agent, use 'shared'/);
    const coop = setField(setField(grid, 'env.id', 'grid/switch-door'), 'model.agents', 'separate');
    expect(validate(coop).ok).toBe(true);
  });
  it('the reward code\'s failure policy and time limit per call are form fields with plain messages', () => {
    expect(shown(grid)).toEqual(expect.arrayContaining(['reward.onNonFinite', 'reward.callTimeoutMs']));
    // Tool (token) runs score user terms too: one step record per tool call or answer turn.
    expect(shown(calc)).toEqual(expect.arrayContaining(['reward.onNonFinite', 'reward.callTimeoutMs']));
    const stop = validate(setField(grid, 'reward.onNonFinite', 'stop'));
    expect(stop.ok && stop.config.reward.onNonFinite).toBe('stop');
    const slow = validate(setField(grid, 'reward.callTimeoutMs', 250));
    expect(slow.ok && slow.config.reward.callTimeoutMs).toBe(250);
    const msg = (value: unknown) => {
      const v = validate(setField(grid, 'reward.callTimeoutMs', value));
      return v.ok ? null : v.byField['reward.callTimeoutMs']?.[0];
    };
    expect(msg(0)).toBe('must be at least 1 ms');
    expect(msg(20_000)).toMatch(/^must be at most 10,000 ms/);
    expect(msg(2.5)).toBe('must be a whole number of milliseconds');
    expect(msg('fast')).toBe('must be a whole number of milliseconds');
    const bad = validate(setField(grid, 'reward.onNonFinite', 'pause'));
    expect(bad.ok ? null : bad.byField['reward.onNonFinite']?.[0]).toMatch(/must be 'skip'/);
  });
  it('a bad weight is filed under its field; a link can shorten the warm start', () => {
    const v = validate(setField(calc, 'shaping.format.weight', -1));
    if (v.ok) throw new Error('expected a negative weight to be rejected');
    expect(v.byField['shaping.format.weight']?.[0]).toMatch(/≥ 0/);
    const r = draftFromHash(parseTrainHash('#view=train&preset=calc-grpo&warmStart.steps=40&iterations=3'), loadPresets([calcPreset]).presets, 'wasm');
    expect(r.problems).toEqual([]);
    expect(r.draft.warmStart?.steps).toBe(40);
    expect(validate(r.draft).ok).toBe(true);
  });
});

describe('staged runs in the form', () => {
  const staged = draftFromPreset(loadPresets([pipelinePreset]).presets[0], 'wasm');
  it("shows the Stages section with each stage's name; a stage edit keeps the run's length its sum, in links too", () => {
    expect(staged.iterations).toBe(90);
    const stageFields = FIELDS.filter((f) => f.panel === 'pipeline' && (!f.when || f.when(staged)));
    expect(stageFields.map((f) => `${f.groupFor!(staged)} · ${f.label}`)).toEqual([
      '1. RL on door-key 6×6 · Iterations',
      '2. RL on door-key 8×8 · Iterations',
      '3. Distill into 16 units · Iterations',
      '3. Distill into 16 units · Student sizes',
      '3. Distill into 16 units · Distill weight',
      '3. Distill into 16 units · Task reward',
    ]);
    // The run's own iteration count is not a form field of a staged run.
    expect(FIELDS.find((f) => f.path === 'iterations')!.when!(staged)).toBe(false);
    const d = setField(staged, 'stages.1.iterations', 5);
    expect(d.iterations).toBe(65);
    const v = validate(d);
    if (!v.ok) throw new Error(JSON.stringify(v));
    expect(v.config.iterations).toBe(65);
    expect(v.config.stages[1].iterations).toBe(5);
    const r = draftFromHash(parseTrainHash('#view=train&preset=grid-door-key-pipeline&stages.0.iterations=3&stages.2.distill.student.hidden=8'), loadPresets([pipelinePreset]).presets, 'wasm');
    expect(r.problems).toEqual([]);
    expect(r.draft.iterations).toBe(63);
    expect((r.draft.stages[2].distill?.student as { hidden?: number[] } | undefined)?.hidden).toEqual([8]);
  });
  it("a transformer student's MLP width and context are form fields; a context beyond the teacher's is filed under the student's", () => {
    const distill = draftFromPreset(loadPresets([calcDistillPreset]).presets[0], 'wasm');
    const shown = FIELDS.filter((f) => f.panel === 'pipeline' && (!f.when || f.when(distill))).map((f) => f.path);
    expect(shown).toEqual(expect.arrayContaining(['stages.1.distill.student.dFF', 'stages.1.distill.student.context']));
    expect(shown).not.toContain('stages.1.distill.student.hidden');
    const ok = validate(setField(distill, 'stages.1.distill.student.dFF', 48));
    if (!ok.ok) throw new Error(JSON.stringify(ok));
    expect((ok.config.stages[1].distill?.student as { dFF?: number }).dFF).toBe(48);
    const v = validate(setField(distill, 'stages.1.distill.student.context', distill.model.kind === 'transformer' ? distill.model.context + 8 : 0));
    if (v.ok) throw new Error("expected a student context beyond the teacher's to be rejected");
    expect(Object.keys(v.byField)).toEqual(['stages.1.distill.student.context']);
  });
  it('a bad stage value is filed under its field', () => {
    const v = validate(setField(staged, 'stages.2.distill.klCoef', -1));
    if (v.ok) throw new Error('expected a negative weight to be rejected');
    expect(Object.keys(v.byField)).toEqual(['stages.2.distill.klCoef']);
  });
});

describe('URL hash', () => {
  it('round-trips preset + overrides + backend, writing only what differs', () => {
    const base = draftFromPreset(presets[0], 'webgpu');
    const d = setField(setField(setField({ ...base, backend: 'wasm' }, 'algo.lr', 0.002), 'model.hidden', [32, 16]), 'algo.dynamicSampling.enabled', true);
    const hash = formatTrainHash(presets[0].id, base, d);
    expect(hash).toBe('#view=train&preset=grid-empty-8x8-grpo&backend=wasm&model.hidden=32,16&algo.lr=0.002&algo.dynamicSampling.enabled=true');
    expect(isTrainHash(hash)).toBe(true);
    expect(isTrainHash('#env=grid/empty-5x5&seed=1')).toBe(false);
    const back = draftFromHash(parseTrainHash(hash), presets, 'webgpu');
    expect(back.problems).toEqual([]);
    expect(changedFields(back.draft, d)).toEqual([]);
    expect(back.draft.backend).toBe('wasm');
  });
  it('reports unknown presets, settings and bad values, and keeps the rest', () => {
    const p = parseTrainHash('#view=train&preset=nope&algo.lr=abc&colour=red&algo.groupSize=4');
    const r = draftFromHash(p, presets, 'wasm');
    expect(r.presetId).toBe('grid-empty-8x8-grpo');
    expect(r.problems.join('\n')).toMatch(/algo\.lr=abc is not a number[\s\S]*unknown setting "colour"[\s\S]*no preset "nope"/);
    expect(r.draft.algo.groupSize).toBe(4);
  });
  it('a number too large for a double (algo.lr=1e400) is named as such, not shown back as null, and the preset\'s kept', () => {
    const r = draftFromHash(parseTrainHash('#view=train&preset=grid-empty-8x8-grpo&algo.lr=1e400'), presets, 'wasm');
    expect(r.problems).toEqual([expect.stringMatching(/^algo\.lr=1e400 is too large for a number \(beyond ±1\.8e308/)]);
    expect(r.problems.join()).not.toMatch(/null/);
    expect(r.draft.algo.lr).toBe(presets[0].config.algo.lr);
  });
  it('holds a link to the form\'s bounds: an out-of-range value is named and the preset\'s kept', () => {
    const r = draftFromHash(parseTrainHash('#view=train&preset=grid-empty-8x8-grpo&iterations=-5&algo.lr=0.002'), presets, 'wasm');
    expect(r.problems).toEqual([expect.stringMatching(/^iterations=-5: .*>=1.*; kept 40$/)]);
    expect(r.draft.iterations).toBe(40);
    expect(r.draft.algo.lr).toBe(0.002);
    expect(validate(r.draft).ok).toBe(true);
  });
});
