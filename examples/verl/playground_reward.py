"""Reward for verl / verl-tool runs against `npm run serve`: the env's own turn rewards.

Load it as verl's custom reward function and pick the reward manager it registers:

    custom_reward_function.path=$PWD/examples/verl/playground_reward.py
    custom_reward_function.name=compute_score
    reward_model.reward_manager=playground_env

Why both keys. verl's default reward manager ("naive") scores a rollout with
compute_score(data_source, solution_str, ground_truth, extra_info): it never sees what the tool
server answered, so the env's rewards are lost. verl-tool's agent loop keeps every answer of the
server, each observation dict with its `reward`, in `non_tensor_batch["tool_interact_info"]`
(verl_tool/agent_loop/verltool_agent_loop.py, AgentLoopOutput.extra_fields). The manager below
reads it and puts the episode's return (the sum of the turn rewards) on the last response token,
where verl's naive manager puts its score; GRPO (core_algos.compute_grpo_outcome_advantage) uses
only the sum over tokens. Registration: load_reward_manager (verl_tool/trainer/ppo/reward.py, and verl's
verl/trainer/ppo/reward.py) imports custom_reward_function.path before it looks the manager name
up in the registry ("user defined reward manager can be registered in custom_reward_fn"), in
every process that builds a reward manager (the trainer, verl-tool's RewardManagerWorker, the
launch_reward_fn_async worker), so the path must be absolute and readable on every node.

compute_score is the fallback for a rollout that has no tool_interact_info (a trainer without
verl-tool's agent loop, or reward_model.reward_manager=naive): 1.0 when the last answer(...) call
in the response equals the ground truth prepare_data.py wrote (the expert's final call), else
0.0. That recomputes the calculator's reward from the text; it is not the env's verdict.

Checked against verl-tool's main branch at commit 980962b4 (its vendored verl) and verl's main at
b178a3cd, by reading the code; not run on a GPU cluster from this project.
"""
import re
from collections import defaultdict

import torch
from verl import DataProto
from verl.workers.reward_manager.abstract import AbstractRewardManager
from verl.workers.reward_manager.registry import REWARD_MANAGER_REGISTRY

NAME = "playground_env"


def _normalize(call: str | None) -> str:
    return re.sub(r"\s+", "", call or "")


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """Fallback scorer (no turn rewards available): the response's last answer(...) call
    against the ground truth."""
    answers = re.findall(r"answer\([^()]*\)", solution_str or "")
    return 1.0 if answers and _normalize(answers[-1]) == _normalize(ground_truth) else 0.0


def episode_from_turns(turns) -> dict:
    """Return, success and turn count from verl-tool's tool_interact_info (one dict per server
    answer: the server's observation fields `obs`, `reward`, `terminated`, `truncated`, `info`,
    plus the agent loop's own keys)."""
    total, success, n = 0.0, False, 0
    for turn in list(turns):
        if not isinstance(turn, dict):
            continue
        n += 1
        reward = turn.get("reward")
        if isinstance(reward, (int, float)):
            total += float(reward)
        info = turn.get("info")
        if isinstance(info, dict) and info.get("success") is True:
            success = True
    return {"score": total, "env_return": total, "env_success": float(success), "env_turns": float(n)}


class PlaygroundEnvRewardManager(AbstractRewardManager):
    """Scores each rollout with the sum of the env's turn rewards (see the module docstring)."""

    def __init__(self, tokenizer, num_examine, compute_score=None, reward_fn_key="data_source", **kwargs) -> None:
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.compute_score = compute_score or globals()["compute_score"]
        self.reward_fn_key = reward_fn_key

    def __call__(self, data: DataProto, return_dict: bool = False):
        # verl-tool's agent loop may already have scored each rollout with this manager (its
        # RewardManagerWorker) and stored the result as rm_scores: return it, as verl's naive
        # manager does.
        if "rm_scores" in data.batch.keys():
            if return_dict:
                keys = data.meta_info.get("reward_extra_keys", [])
                return {"reward_tensor": data.batch["rm_scores"], "reward_extra_info": {k: data.non_tensor_batch[k] for k in keys}}
            return data.batch["rm_scores"]

        reward_tensor = torch.zeros_like(data.batch["responses"], dtype=torch.float32)
        reward_extra_info = defaultdict(list)
        printed = defaultdict(int)
        for i in range(len(data)):
            item = data[i]
            prompt_length = item.batch["prompts"].shape[-1]
            valid_response_length = int(item.batch["attention_mask"][prompt_length:].sum())
            data_source = item.non_tensor_batch.get(self.reward_fn_key, "")
            turns = item.non_tensor_batch.get("tool_interact_info", None)
            if turns is not None:
                result = episode_from_turns(turns)
            else:
                response_str = self.tokenizer.decode(item.batch["responses"][:valid_response_length], skip_special_tokens=True)
                ground_truth = (item.non_tensor_batch.get("reward_model") or {}).get("ground_truth", "")
                score = float(self.compute_score(data_source=data_source, solution_str=response_str, ground_truth=ground_truth, extra_info=item.non_tensor_batch.get("extra_info", {})))
                result = {"score": score, "env_return": score, "env_success": float(score > 0), "env_turns": 0.0}
            reward_tensor[i, valid_response_length - 1] = result["score"]
            for key, value in result.items():
                reward_extra_info[key].append(value)
            if printed[data_source] < self.num_examine:
                printed[data_source] += 1
                response_str = self.tokenizer.decode(item.batch["responses"][:valid_response_length], skip_special_tokens=True)
                print("[response]", response_str)
                print("[env]", result)

        if return_dict:
            return {"reward_tensor": reward_tensor, "reward_extra_info": reward_extra_info}
        return reward_tensor


# Registered without verl's register() decorator, which refuses a second, different class under
# the same name: a loader that executes this file again (one per process is the norm) keeps the
# first registration.
if NAME not in REWARD_MANAGER_REGISTRY:
    REWARD_MANAGER_REGISTRY[NAME] = PlaygroundEnvRewardManager
