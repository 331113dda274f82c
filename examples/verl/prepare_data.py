#!/usr/bin/env python3
"""Build verl / verl-tool parquet files for a tool env served by `npm run serve`.

One row per seed, in the layout verl's RLHFDataset reads (the same columns as verl-tool's
examples/data_preprocess/*.py):

  data_source   "playground/<env id>"
  prompt        [{"role": "system", ...}, {"role": "user", "content": <the env's task text>}]
  ability       "tool-use"
  reward_model  {"style": "rule", "ground_truth": <the expert's final call, e.g. "answer(10721228)">}
  extra_info    {"seed": s, "kwargs": {...} (only with --kwargs), "split": ..., "index": i}

verl-tool's agent loop sends the row's `extra_info` as the trajectory's `extra_fields`
(verl_tool/agent_loop/verltool_agent_loop.py: `extra_fields = kwargs.get("extra_info", {})`),
which is how the server learns the seed (and kwargs) whose task the prompt shows.

The task text comes from `POST /reset {"seed": s}`; the ground truth from playing the env's own
expert (`GET /state` gives `expert_action`) to the end of the episode, so it is what the env
itself accepts. It is only used by the fallback scorer in playground_reward.py; the reward
manager there scores with the env's turn rewards.

Usage (start the server with --latency skip so the expert episodes do not wait out simulated
tool latency; the training server can use --latency real):

  npm run serve -- --env tools/calculator --port 8000 --latency skip &
  python3 examples/verl/prepare_data.py --server http://127.0.0.1:8000 --out data/calculator
  # -> data/calculator/train.parquet (seeds 0..4095), data/calculator/val.parquet (seeds 1000000..1000255)

Writing parquet needs pandas and pyarrow (both are verl dependencies). `--jsonl` writes
train.jsonl / val.jsonl instead, with the standard library only.
"""
import argparse
import importlib.util
import json
import os
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

# The action format the stop string in stop_tokens.txt ends (the examples are the calculator's;
# every tool env here ends with answer(...)). The server (`--verl-actions
# last-call`, its default) plays the last balanced name(...) call in the turn, so the tags and
# any text around them are fine, and so are nested parentheses: calc((2+3)*(4+5)).
SYSTEM_PROMPT = (
    "You solve the task with the tools it lists. Write exactly one tool call per turn, inside "
    "<call> and </call>, e.g. <call>calc((12+3)*45)</call>, and stop there: the tool's reply "
    "comes back as the next message. Submit the final result with the answer tool, e.g. "
    "<call>answer(675)</call>."
)


def post(server, path, body):
    req = urllib.request.Request(
        server.rstrip("/") + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        raise SystemExit(f"POST {path} {json.dumps(body)}: HTTP {e.code} {e.read().decode(errors='replace')}")


def get(server, path):
    try:
        with urllib.request.urlopen(server.rstrip("/") + path, timeout=60) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        raise SystemExit(f"GET {path}: HTTP {e.code} {e.read().decode(errors='replace')}")


def make_row(server, env_id, seed, kwargs, split, index, max_turns=32):
    session = f"prepare-{split}-{seed}"
    reset = post(server, "/reset", {"seed": seed, "session_id": session, **kwargs})
    task = reset["observation"]["text"]
    # Play the env's expert to the end; its last call is the answer the env accepts.
    last_action, total, success = None, 0.0, False
    for _ in range(max_turns):
        state = get(server, f"/state?session_id={session}")
        if state["done"]:
            break
        last_action = state["expert_action"]["text"]
        step = post(server, "/step", {"action": {"text": last_action}, "session_id": session})
        total += step["reward"] or 0.0
        success = bool(step["observation"]["info"].get("success", False))
        if step["done"]:
            break
    post(server, "/close", {"session_id": session})
    if not success:
        print(f"warning: the expert did not succeed on seed {seed} (return {total}); ground truth {last_action!r}", file=sys.stderr)
    extra_info = {"seed": seed, "split": split, "index": index}
    if kwargs:
        extra_info["kwargs"] = kwargs
    return {
        "data_source": f"playground/{env_id}",
        "prompt": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task},
        ],
        "ability": "tool-use",
        "reward_model": {"style": "rule", "ground_truth": last_action or ""},
        "extra_info": extra_info,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", default="http://127.0.0.1:8000", help="base URL of `npm run serve` for ONE env (under --env all: http://HOST:PORT/<env id>)")
    p.add_argument("--out", default="data/calculator", help="output folder")
    p.add_argument("--train-seeds", default="0-4095", help="first-last (inclusive)")
    p.add_argument("--val-seeds", default="1000000-1000255", help="first-last (inclusive), disjoint from the training seeds")
    p.add_argument("--kwargs", default="{}", help='env kwargs as JSON, e.g. \'{"terms": 2}\' (sent with each reset and kept in extra_info.kwargs)')
    p.add_argument("--workers", type=int, default=16, help="episodes played at once (each its own session)")
    p.add_argument("--jsonl", action="store_true", help="write .jsonl instead of .parquet (no pandas/pyarrow needed)")
    args = p.parse_args()

    if not args.jsonl:
        # Checked before any episode is played: a missing writer used to fail only after all 4,096.
        missing = [m for m in ("pandas", "pyarrow") if importlib.util.find_spec(m) is None]
        if missing:
            raise SystemExit(f"writing parquet needs {' and '.join(missing)} (verl's own dependencies): pip install {' '.join(missing)}, or pass --jsonl for train.jsonl / val.jsonl with the standard library only")
    kwargs = json.loads(args.kwargs)
    if not isinstance(kwargs, dict):
        raise SystemExit("--kwargs must be a JSON object")
    env_id = get(args.server, "/metadata").get("name") or "env"
    os.makedirs(args.out, exist_ok=True)
    for split, spec in (("train", args.train_seeds), ("val", args.val_seeds)):
        first, last = (int(x) for x in spec.split("-"))
        with ThreadPoolExecutor(args.workers) as pool:
            rows = list(pool.map(lambda item: make_row(args.server, env_id, item[1], kwargs, split, item[0]), enumerate(range(first, last + 1))))
        if args.jsonl:
            path = os.path.join(args.out, f"{split}.jsonl")
            with open(path, "w") as f:
                for row in rows:
                    f.write(json.dumps(row) + "\n")
        else:
            import pandas as pd  # verl's own dependency, with pyarrow

            path = os.path.join(args.out, f"{split}.parquet")
            pd.DataFrame(rows).to_parquet(path)
        print(f"{path}: {len(rows)} rows, seeds {first}..{last}")


if __name__ == "__main__":
    main()
