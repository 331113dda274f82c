/**
 * The Python side of an export: `reward_terms.py` (the run's reward, built-in shaping and reward-lab
 * terms, as functions of an episode recorded from the env server) and the TRL training script.
 * Plain text generators; the standard library is all reward_terms.py imports.
 */
import type { TermTranslation } from './pyTerms.ts';
import { pyLiteral } from './frameworks.ts';

/** A built-in shaping term with a weight, as a per-step expression (null: not computable from the server's replies). */
export interface BuiltinTerm {
  name: string;
  python: string | null;
  why?: string;
}

export interface RewardModule {
  envId: string;
  kwargs: Record<string, unknown>;
  /** Grid envs: action labels by id (the step record's actionName); null for text envs. */
  actionLabels: readonly string[] | null;
  builtins: readonly BuiltinTerm[];
  terms: readonly TermTranslation[];
}

/** reward_terms.py's JavaScript semantics the translated terms rely on (division, rounding, the info fields). */
const JS_COMPAT_PY = `def _div(a, b):
    """JS division: x/0 is +-Infinity, 0/0 NaN (Python raises)."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _round(x):
    """JS Math.round: halves go up."""
    return math.floor(x + 0.5)


def _info(info):
    info = info if isinstance(info, dict) else {}
    progress = info.get("progress")
    return {
        "progress": progress if isinstance(progress, (int, float)) and math.isfinite(progress) else 0,
        "success": info.get("success") is True,
        "toolCall": info.get("toolCall") if isinstance(info.get("toolCall"), str) else None,
        "toolFailed": info.get("toolFailed") is True,
        "recovered": info.get("recovered") is True,
        "malformed": info.get("malformed") is True,
    }


`;

/** reward_terms.py: an episode recorded from the server's replies, and its step records as the reward lab gives them. */
const EPISODE_RECORD_PY = `def new_episode(seed, first_observation_text=None):
    """An empty episode record; fill it with record_step after each env step."""
    return {"seed": seed, "kwargs": dict(ENV_KWARGS), "observations": [first_observation_text], "actions": [], "rewards": [], "infos": [], "terminated": False, "truncated": False}


def record_step(episode, action, reply_observation, reward, done):
    """Adds one env step: the wire action (an action id or the call text) and the server's reply."""
    obs = reply_observation if isinstance(reply_observation, dict) else {}
    episode["actions"].append(action)
    episode["rewards"].append(float(reward or 0.0))
    episode["infos"].append(obs.get("info") or {})
    episode["observations"].append(obs.get("text"))
    episode["terminated"] = bool(obs.get("terminated", done))
    episode["truncated"] = bool(obs.get("truncated", False))


def step_records(episode):
    """The reward lab's step records of a recorded episode (the fields this side can fill)."""
    T = len(episode["actions"])
    records, so_far = [], 0.0
    for t in range(T):
        a = episode["actions"][t]
        last = t == T - 1
        records.append({
            "t": t,
            "observation": {"text": episode["observations"][t], "direction": -1, "nextText": episode["observations"][t + 1] if t + 1 < len(episode["observations"]) else None},
            "action": a if isinstance(a, int) else -1,
            "actionName": ACTION_LABELS[a] if isinstance(a, int) and ACTION_LABELS else str(a),
            "reward": episode["rewards"][t],
            "terminated": last and episode["terminated"],
            "truncated": last and episode["truncated"],
            "info": _info(episode["infos"][t]),
            "episode": {"seed": episode["seed"], "envId": ENV_ID, "length": T, "returnSoFar": so_far},
        })
        so_far += episode["rewards"][t]
    return records


`;

/** reward_terms.py: an episode's term sums, per-step terms here and untranslated ones scored by the server. */
const EPISODE_SCORE_PY = `def score_on_server(episode):
    """Episode sums of SERVER_TERMS, scored by the playground's own sandbox (POST /score)."""
    body = {"seed": episode["seed"], "kwargs": episode["kwargs"], "actions": episode["actions"], "rewards": episode["rewards"],
            "infos": episode["infos"], "observations": episode["observations"], "terminated": episode["terminated"], "truncated": episode["truncated"]}
    req = urllib.request.Request(SERVER.rstrip("/") + "/score", data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)["terms"]


def episode_terms(episode):
    """{term: the episode's sum of that term}: what the run added to the episode's reward."""
    out = {name: 0.0 for name in TERMS}
    fns = {name: globals()[name] for name in STEP_TERMS}
    for step in step_records(episode):
        for name, fn in fns.items():
            value = float(fn(step))
            if math.isfinite(value):  # the playground's 'skip': a non-finite value counts 0
                out[name] += value
    if SERVER_TERMS:
        scored = score_on_server(episode)
        for name in SERVER_TERMS:
            out[name] = float(scored.get(name, 0.0))
    return out


`;

/** reward_terms.py: every reward term the run used, each named as in the run's metrics. */
export function rewardTermsPy(m: RewardModule): string {
  const perStep = [...m.builtins.filter((b) => b.python !== null).map((b) => ({ name: b.name, python: b.python! })), ...m.terms.flatMap((t) => (t.python === null ? [] : [{ name: t.name, python: t.python }]))];
  const onServer = m.terms.filter((t) => t.python === null).map((t) => t.name);
  const fns = perStep.map((t) => `def ${t.name}(step):\n    return ${t.python}\n`).join('\n\n');
  return `"""The reward of a playground run, term by term, for ${m.envId}.

Each term is a function named as the run's metric (reward/<term>/mean in the playground,
rewards/<term>/mean in TRL). Translated terms take one step record (the dict the playground's
reward lab gives a term: t, observation, action, actionName, reward, terminated, truncated,
info, episode) and run here. Terms listed in SERVER_TERMS did not translate: the playground's
env server scores them in its own sandbox, from the episode's seed and actions
(\`npm run serve -- --env ${m.envId} --reward-file reward_terms.js\`, POST /score).
"""
import json
import math
import os
import urllib.request

SERVER = os.environ.get("PLAYGROUND_SERVER", "http://127.0.0.1:8000")
ENV_ID = ${JSON.stringify(m.envId)}
ENV_KWARGS = ${pyLiteral(m.kwargs)}
ACTION_LABELS = ${pyLiteral(m.actionLabels)}

# Terms computed here, per step (summed over the episode), and terms the server scores.
STEP_TERMS = [${perStep.map((t) => JSON.stringify(t.name)).join(', ')}]
SERVER_TERMS = [${onServer.map((n) => JSON.stringify(n)).join(', ')}]
TERMS = STEP_TERMS + SERVER_TERMS


${JS_COMPAT_PY}${EPISODE_RECORD_PY}${EPISODE_SCORE_PY}# ---------------------------------------------------------------- the terms

${fns || '# (no per-step terms)\n'}`;
}

/** train_trl.py's environment_factory: one rollout's session on the server, its public methods the model's tools. */
function playgroundEnvPy(actionDoc: string, isGrid: boolean): string {
  return `class PlaygroundEnv:
    """One rollout's env: a session on the playground's server. Public methods are the model's tools."""

    def __init__(self):
        self.session = uuid.uuid4().hex
        self.episode = None
        self.done = True
        self._scored = None

    def reset(self, seed=None, **_):
        reply = _post("/reset", {"seed": seed, "session_id": self.session, **rt.ENV_KWARGS})
        self.episode = rt.new_episode(seed, _text(reply["observation"]))
        self.done = False
        self._scored = None
        return self.episode["observations"][0]

    def act(self, action: str) -> str:
        """Take one step in the environment.

        Args:
            action: ${actionDoc}
        """
        if self.done:
            return "the episode is over"
        wire = ${isGrid ? '{"action_id": rt.ACTION_LABELS.index(action.strip())} if action.strip() in rt.ACTION_LABELS else None' : '{"text": action}'}
        if wire is None:
            return "unknown action: use one of " + ", ".join(rt.ACTION_LABELS)
        reply = _post("/step", {"action": wire, "session_id": self.session})
        rt.record_step(self.episode, ${isGrid ? 'wire["action_id"]' : 'action'}, reply["observation"], reply["reward"], reply["done"])
        self.done = reply["done"]
        return _text(reply["observation"])

    def _terms(self):
        if self._scored is None:
            self._scored = rt.episode_terms(self.episode) if self.episode and self.episode["actions"] else {n: 0.0 for n in rt.TERMS}
        return self._scored


`;
}

/** train_trl.py: GRPOTrainer with the env served by `npm run serve` as its environment_factory. */
export function trlScriptPy(envId: string, isGrid: boolean): string {
  const actionDoc = isGrid ? 'the action to take: one of left, right, forward, pickup, drop, toggle, done' : 'one tool call exactly as the task lists them, e.g. calc(3*4) or answer(12)';
  return `"""Train with TRL's GRPOTrainer on ${envId}, served by the playground (\`npm run serve\`).

GRPOConfig comes from grpo_config.json (the run's hyperparameters under TRL's names); the
reward functions are reward_terms.TERMS, one per term, named as the run's metrics. The env is
the playground's OpenEnv HTTP server: one session per rollout, reset with the row's seed.
"""
import json
import os
import urllib.request
import uuid

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

import reward_terms as rt

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.environ.get("MODEL", "Qwen/Qwen3-0.6B")


def _post(path, body):
    req = urllib.request.Request(rt.SERVER.rstrip("/") + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)


def _text(observation):
    return observation.get("text") if isinstance(observation.get("text"), str) else json.dumps({k: v for k, v in observation.items() if k != "info"})


${playgroundEnvPy(actionDoc, isGrid)}def _reward_function(name):
    def reward(environments, **_):
        return [env._terms()[name] for env in environments]

    reward.__name__ = name  # TRL logs rewards/<__name__>/mean
    return reward


def main():
    with open(os.path.join(HERE, "grpo_config.json")) as f:
        args = GRPOConfig(**json.load(f))
    prompts = args.max_steps * args.generation_batch_size // args.num_generations
    train = Dataset.from_dict({"prompt": [[{"role": "user", "content": "Solve the task with the act tool."}]] * prompts, "seed": list(range(prompts))})
    trainer = GRPOTrainer(model=MODEL, reward_funcs=[_reward_function(n) for n in rt.TERMS], train_dataset=train, environment_factory=PlaygroundEnv, args=args)
    trainer.train()


if __name__ == "__main__":
    main()
`;
}

/** terms_reward.py for veRL: the recipe's reward manager, scoring with every term instead of the env return alone. */
export function verlTermsRewardPy(): string {
  return `"""veRL reward: the recipe's playground_env manager (playground_reward.py), scoring each rollout
with the run's reward terms (reward_terms.py) instead of the env's return alone.

    custom_reward_function.path=$PWD/terms_reward.py
    custom_reward_function.name=compute_score
    reward_model.reward_manager=playground_env

verl-tool keeps each server answer in tool_interact_info; with \`npm run serve\` each answer carries
the call it played (\`action\`) and the trajectory's \`seed\`, which is what the terms read.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import playground_reward as base  # noqa: E402  registers the playground_env manager
import reward_terms as rt  # noqa: E402

compute_score = base.compute_score
_env_only = base.episode_from_turns


def episode_from_verl_turns(turns):
    turns = [t for t in list(turns) if isinstance(t, dict)]
    seed = next((t.get("seed") for t in turns if isinstance(t.get("seed"), int)), None)
    episode = rt.new_episode(seed)
    for t in turns:
        observation = {"text": t.get("obs"), "info": t.get("info"), "terminated": t.get("terminated"), "truncated": t.get("truncated")}
        rt.record_step(episode, t.get("action", ""), observation, t.get("reward"), bool(t.get("terminated") or t.get("truncated")))
    return episode


def episode_from_turns(turns):
    out = _env_only(turns)
    terms = rt.episode_terms(episode_from_verl_turns(turns))
    out["score"] = sum(terms.values())
    out.update({"term/" + name: value for name, value in terms.items()})
    return out


# The manager looks episode_from_turns up in its own module at call time: swap in this one.
base.episode_from_turns = episode_from_turns
`;
}
