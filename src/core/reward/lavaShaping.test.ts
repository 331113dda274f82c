/**
 * Potential shaping once paid the agent for dying (Φ_T was 0 on every termination, lava
 * included, so walking into lava earned the whole distance and beat wandering until the step
 * limit). On the shipped lava map, with the map preset's shaping and the trainer's potential,
 * every way of dying (every lava cell, from every pose next to it) must score below every way
 * of timing out (ending in every pose the map has).
 */
import { describe, expect, it } from 'vitest';
import { CustomMapEnv } from '../envs/grid/custom.ts';
import { mapToKwargs, type GridMap } from '../envs/grid/mapSpec.ts';
import { AGENT_CHARS } from '../envs/grid/objects.ts';
import { DIR_VEC } from '../envs/grid/view.ts';
import { ACTION } from '../envs/grid/world.ts';
import type { GridFrame } from '../envs/types.ts';
import { POTENTIALS } from '../rollout/stepPool.ts';
import { TRAINER_POTENTIAL } from '../trainer/stepCollector.ts';
import { parseShapingConfig, shapeEpisode } from './shaping.ts';
import lavaCrossing from '../../../examples/envs/lava-crossing.json';
import mapPreset from '../../../presets/grid-map-grpo-shaped.json';

/** Shortest action sequence to every pose (x, y, heading) the agent can stand in without ending the episode. */
function posesOf(rows: readonly string[]): Map<string, { x: number; y: number; dir: number; actions: number[] }> {
  const H = rows.length;
  const W = rows[0].length;
  let start = { x: 0, y: 0, dir: 0 };
  rows.forEach((r, y) => [...r].forEach((ch, x) => AGENT_CHARS.includes(ch) && (start = { x, y, dir: AGENT_CHARS.indexOf(ch) })));
  const out = new Map([[`${start.x},${start.y},${start.dir}`, { ...start, actions: [] as number[] }]]);
  const queue = [...out.values()];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i];
    const [dx, dy] = DIR_VEC[p.dir];
    const fx = p.x + dx, fy = p.y + dy;
    const floor = fx >= 0 && fy >= 0 && fx < W && fy < H && (rows[fy][fx] === '.' || AGENT_CHARS.includes(rows[fy][fx]));
    const next = [
      { x: p.x, y: p.y, dir: (p.dir + 3) & 3, a: ACTION.left },
      { x: p.x, y: p.y, dir: (p.dir + 1) & 3, a: ACTION.right },
      ...(floor ? [{ x: fx, y: fy, dir: p.dir, a: ACTION.forward }] : []),
    ];
    for (const n of next) {
      const k = `${n.x},${n.y},${n.dir}`;
      if (out.has(k)) continue;
      const pose = { x: n.x, y: n.y, dir: n.dir, actions: [...p.actions, n.a] };
      out.set(k, pose);
      queue.push(pose);
    }
  }
  return out;
}

/** Plays `actions` from reset (then turns left until the episode ends) and scores it as the trainer does. */
function play(map: GridMap, actions: readonly number[], untilEnd: boolean) {
  const env = new CustomMapEnv('grid/custom', mapToKwargs(map));
  const potential = POTENTIALS[TRAINER_POTENTIAL];
  env.reset({ seed: 0 });
  const potentials = [potential.phi(env.frame())];
  const potentialFloor = potential.floor(env.frame());
  const rewards: number[] = [], infos = [];
  let end = { terminated: false, truncated: false };
  for (let t = 0; !(end.terminated || end.truncated) && (t < actions.length || untilEnd); t++) {
    const r = env.step(t < actions.length ? actions[t] : ACTION.left);
    rewards.push(r.reward);
    infos.push(r.info);
    potentials.push(potential.phi(env.frame()));
    end = { terminated: r.terminated, truncated: r.truncated };
  }
  const parsed = parseShapingConfig(mapPreset.shaping);
  if (!parsed.ok) throw new Error(parsed.messages.join('\n'));
  const shaped = shapeEpisode({ rewards, infos, ...end, policyTokens: rewards.length, potentials, potentialFloor }, parsed.config);
  return { ...end, success: infos.at(-1)?.success === true, total: shaped.total, outcome: shaped.terms.outcome, where: (env.frame() as GridFrame).agent };
}

describe('lava map (examples/envs/lava-crossing.json), map preset shaping', () => {
  const map = lavaCrossing as GridMap;
  const poses = [...posesOf(map.rows).values()];

  it('dying in lava, by any cell and from any pose next to it, scores below timing out anywhere', () => {
    expect(mapPreset.shaping.potential.weight).toBeGreaterThan(0);
    const deaths = poses.flatMap((p) => {
      const [dx, dy] = DIR_VEC[p.dir];
      return map.rows[p.y + dy]?.[p.x + dx] === '~' ? [{ lava: `${p.x + dx},${p.y + dy}`, ...play(map, [...p.actions, ACTION.forward], false) }] : [];
    });
    const timeouts = poses.map((p) => play(map, p.actions, true));
    // Every lava cell of the map is entered somewhere, and each such episode is a failure.
    const lavaCells = map.rows.flatMap((r, y) => [...r].flatMap((ch, x) => (ch === '~' ? [`${x},${y}`] : [])));
    expect(new Set(deaths.map((d) => d.lava))).toEqual(new Set(lavaCells));
    expect(deaths.every((d) => d.terminated && !d.success && d.outcome === map.lavaReward)).toBe(true);
    expect(timeouts.every((t) => t.truncated && !t.success)).toBe(true);
    const bestDeath = Math.max(...deaths.map((d) => d.total));
    const worstTimeout = Math.min(...timeouts.map((t) => t.total));
    expect(bestDeath).toBeLessThan(worstTimeout);
    // And reaching the goal scores above every timeout.
    const solved = play(map, posesOf(map.rows).get('6,7,0')!.actions.concat(ACTION.forward), false);
    expect(solved.success).toBe(true);
    expect(solved.total).toBeGreaterThan(Math.max(...timeouts.map((t) => t.total)));
  });
});
