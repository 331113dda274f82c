/**
 * verl-tool's batched tool-server protocol, for the tool envs.
 *
 * `POST /get_observation` with
 *   `{trajectory_ids: [...], actions: [...], finish?: [...], is_last_step?: [...], extra_fields?: [{...}, ...]}`
 * (every list as long as `trajectory_ids`; any other top-level list is merged into each item's
 * extra fields, as verl-tool's own server does) answers `{observations, dones, valids}`.
 *
 * One env instance per trajectory id. It is created on the id's first action, from
 * `extra_fields[i].seed` (required: the seed whose task text the prompt showed; `POST /reset`
 * with that seed returns it) and optional `extra_fields[i].kwargs` (env kwargs). It is closed when
 * `finish[i]` is true (that action is not played, as verl-tool's finish tool does), after the step
 * where `is_last_step[i]` is true, or after the server's idle timeout.
 *
 * Each observation is `{obs, reward, terminated, truncated, info}`: `obs` is the env's reply
 * text (what verl-tool appends to the prompt), the rest is what a reward function needs.
 * LLM turns carry more than the call (reasoning, tags, a closing sentence); with `actions:
 * 'last-call'` the server plays the last balanced `name(...)` in the text, with 'strict' the text as
 * it is (exactly what the env's own parser sees in the playground).
 * `valids[i]` is false for a malformed call (the env still answered it with an `error:` line and
 * counted the turn) and for an item that could not be played (its `obs` says why).
 */
import { toJson, WireError, type FieldError, type Json } from './wire.ts';
import { readEnvKwargs, resetSession, stepSession, type EpisodeOptions, type SessionStore } from './sessions.ts';

export interface VerlResponse {
  observations: Json[];
  dones: boolean[];
  valids: boolean[];
}

interface Item {
  id: string;
  action: string;
  finish: boolean;
  isLast: boolean;
  extra: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks the batch's shape; a malformed batch is one 400/422, never a partial answer. */
export function readVerlBatch(body: unknown): Item[] {
  if (!isObject(body)) throw new WireError(422, [{ type: 'dict_type', loc: ['body'], msg: 'Input should be an object with trajectory_ids and actions' }]);
  const ids = body.trajectory_ids;
  const actions = body.actions;
  if (!Array.isArray(ids) || !Array.isArray(actions) || ids.length === 0) throw new WireError(400, 'Missing trajectory_ids or actions (two non-empty lists of the same length)');
  if (ids.length !== actions.length) throw new WireError(400, `trajectory_ids and actions length mismatch: ${ids.length} vs ${actions.length}`);
  const errors: FieldError[] = [];
  ids.forEach((id, i) => {
    if (!((typeof id === 'string' && id.length > 0 && id.length <= 255) || (typeof id === 'number' && Number.isFinite(id)))) errors.push({ type: 'string_type', loc: ['body', 'trajectory_ids', i], msg: 'a trajectory id is a non-empty string (or a number), at most 255 characters', input: toJson(id) });
  });
  actions.forEach((a, i) => {
    if (typeof a !== 'string') errors.push({ type: 'string_type', loc: ['body', 'actions', i], msg: 'an action is the model\'s text for this turn', input: toJson(a) });
  });
  const lists: Record<string, unknown[]> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'trajectory_ids' || key === 'actions') continue;
    if (!Array.isArray(value) || value.length !== ids.length) {
      errors.push({ type: 'list_type', loc: ['body', key], msg: `Length mismatch for ${key}: expected a list of ${ids.length}`, input: Array.isArray(value) ? `list of ${value.length}` : toJson(value) });
      continue;
    }
    lists[key] = value;
  }
  for (const key of ['finish', 'is_last_step']) {
    lists[key]?.forEach((v, i) => {
      if (typeof v !== 'boolean') errors.push({ type: 'bool_type', loc: ['body', key, i], msg: 'Input should be a valid boolean', input: toJson(v) });
    });
  }
  lists.extra_fields?.forEach((v, i) => {
    if (!isObject(v)) errors.push({ type: 'dict_type', loc: ['body', 'extra_fields', i], msg: 'Input should be a valid dictionary', input: toJson(v) });
  });
  if (errors.length > 0) throw new WireError(422, errors, 'VALIDATION_ERROR');
  return ids.map((id, i) => {
    const extra: Record<string, unknown> = { ...((lists.extra_fields?.[i] as Record<string, unknown>) ?? {}) };
    for (const [key, list] of Object.entries(lists)) if (key !== 'extra_fields') extra[key] = list[i];
    return { id: String(id), action: actions[i] as string, finish: extra.finish === true, isLast: extra.is_last_step === true, extra };
  });
}

/** How a verl-tool action text becomes the env's action. */
export type VerlActionMode = 'strict' | 'last-call';

/**
 * The last `name(...)` call in `text` with balanced parentheses (name: lowercase letters, digits,
 * `_`), e.g. `I will compute it: calc((2+3)*4).` -> `calc((2+3)*4)`. Text with no such call is
 * returned unchanged, so the env still explains what is wrong with it.
 */
export function lastCall(text: string): string {
  const calls: { start: number; end: number }[] = [];
  for (const m of text.matchAll(/[a-z_][a-z0-9_]*\(/g)) {
    const start = m.index ?? 0;
    let depth = 0;
    for (let i = start + m[0].length - 1; i < text.length; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')' && --depth === 0) {
        calls.push({ start, end: i + 1 });
        break;
      }
    }
  }
  // Outermost calls only: `sum(` inside `calc(sum(1))` is an argument, not the call.
  const outer = calls.filter((c) => !calls.some((o) => o !== c && o.start <= c.start && o.end >= c.end));
  const last = outer[outer.length - 1];
  return last ? text.slice(last.start, last.end) : text;
}

const failed = (why: string) => ({ observation: { obs: `error: ${why}` } as Json, done: true, valid: false });

/**
 * Plays one batch against `envId`'s trajectories; items run concurrently, each trajectory in
 * order. New trajectories are sessions of client `owner` (the per-client quota counts them).
 */
export async function getObservations(items: Item[], envId: string, store: SessionStore, opts: EpisodeOptions, mode: VerlActionMode, owner = ''): Promise<VerlResponse> {
  const results = await Promise.all(
    items.map(async (item) => {
      const key = `verl:${envId}:${item.id}`;
      if (item.finish) {
        store.delete(key);
        return { observation: '' as Json, done: true, valid: true };
      }
      let s = store.get(key);
      if (!s) {
        const { seed, kwargs } = item.extra;
        if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
          return failed(`trajectory ${item.id} is new: extra_fields.seed must give the seed of its task (an integer >= 0), got ${JSON.stringify(seed ?? null)}`);
        }
        if (kwargs !== undefined && !isObject(kwargs)) return failed(`extra_fields.kwargs must be an object of env kwargs, got ${JSON.stringify(kwargs)}`);
        // The same check as a reset's kwargs (POST /reset, a WebSocket reset), then the env's own.
        const kw = readEnvKwargs(Object.entries(kwargs ?? {}), ['extra_fields', 'kwargs']);
        if (kw.errors.length > 0) return failed(`bad env kwargs for trajectory ${item.id}: ${kw.errors.map((e) => `${e.loc.join('.')}: ${e.msg}`).join('; ')}`);
        try {
          const made = store.create(key, envId, owner);
          s = made;
          // In the session's queue, so a later item of this trajectory in the same batch steps after it.
          await made.run(() => resetSession(made, { seed, kwargs: kw.kwargs }, opts));
        } catch (e) {
          store.delete(key);
          return failed((e as Error).message);
        }
      }
      const session = s;
      return session.run(async () => {
        if (session.closed) return failed(`trajectory ${item.id} was closed`);
        if (session.done) return failed(`trajectory ${item.id} already ended after ${session.stepCount} turns; send finish to close it`);
        const played = mode === 'last-call' ? lastCall(item.action) : item.action;
        const r = await stepSession(session, { text: played }, ['body', 'actions'], opts);
        if (item.isLast) store.delete(key);
        const info = r.observation.info as Record<string, Json>;
        const { text, ...rest } = r.observation;
        // The call played and the trajectory's seed ride along, so a reward manager can rebuild the episode's step records (an export's terms_reward.py).
        return { observation: { obs: text, reward: r.reward, ...rest, action: played, seed: session.seed } as Json, done: r.done, valid: info.malformed !== true };
      });
    }),
  );
  return { observations: results.map((r) => r.observation), dones: results.map((r) => r.done), valids: results.map((r) => r.valid) };
}
