"""Drive an expert episode against `npm run serve` with OpenEnv's own client code, run from a
checkout of its repository (not installed, not copied into the project). Not run by CI.

usage: /usr/bin/python3 openenv_client_check.py ws|http|validate OPENENV_SRC BASE_URL SEED

OPENENV_SRC is the `src/openenv` folder of an OpenEnv checkout: for `ws` and `validate` a recent
one, for `http` one at commit 86a222da (its `core/http_env_client.py`), e.g.
    git -C OpenEnv archive HEAD src/openenv | tar -x -C /tmp/oe-head
    git -C OpenEnv archive 86a222da src/openenv | tar -x -C /tmp/oe-http
Needs Debian's python3-requests, python3-pydantic and python3-websockets. The episode's actions
come from the server's `state.expert_action`, read through the client's own `state()`.

ws:       openenv.core.generic_client.GenericEnvClient (WebSocket; OpenEnv HEAD), via .sync()
http:     openenv.core.http_env_client.HTTPEnvClient (requests; OpenEnv at 86a222da, the last
          version of that file before 402d144e removed it; it came back later as a shim over the
          WebSocket client), with the three env-specific methods every OpenEnv
          env client defines (here: plain dicts, as GenericEnvClient does)
validate: openenv.cli._validation.validate_running_environment (OpenEnv HEAD)

Only the package __init__ files are bypassed (openenv.core's imports the FastAPI server side,
which Debian's pydantic 1.10 cannot load); and on Debian bookworm's websockets 10.4 the
`websockets.asyncio.client` import path (new in websockets 13) is pointed at 10.4's
`websockets.client.connect`, which takes the same arguments the client passes.
"""
import json
import sys
import types

if len(sys.argv) != 5 or sys.argv[1] not in ("ws", "http", "validate"):
    sys.exit(__doc__)
mode, root, base_url, seed = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3], int(sys.argv[4])
for name, sub in (("openenv", ""), ("openenv.core", "/core"), ("openenv.cli", "/cli")):
    m = types.ModuleType(name)
    m.__path__ = [root + sub]
    sys.modules[name] = m

if mode == "ws":
    import websockets
    import websockets.client

    shim_pkg = types.ModuleType("websockets.asyncio")
    shim_pkg.__path__ = []
    shim = types.ModuleType("websockets.asyncio.client")
    shim.connect = websockets.client.connect
    shim.ClientConnection = websockets.client.WebSocketClientProtocol
    sys.modules["websockets.asyncio"] = shim_pkg
    sys.modules["websockets.asyncio.client"] = shim
    print(f"websockets {websockets.__version__}")
    from openenv.core.generic_client import GenericEnvClient

    print("client:", GenericEnvClient.__module__, GenericEnvClient.__mro__[1].__module__)
    with GenericEnvClient(base_url=base_url).sync() as env:
        result = env.reset(seed=seed)
        print("reset ->", json.dumps({"observation": result.observation, "reward": result.reward, "done": result.done}))
        try:
            env.step({"bogus": True})
            print("bad action -> accepted (unexpected)")
        except RuntimeError as e:
            print("bad action ->", e)
        total, steps = 0.0, 0
        for _ in range(200):
            if result.done:
                break
            state = env.state()
            action = state["expert_action"]
            result = env.step(action)
            steps += 1
            total += result.reward or 0.0
            obs = result.observation
            print(f"step {steps}: action={json.dumps(action)} reward={result.reward} done={result.done} obs.text={json.dumps(obs.get('text'))} success={obs.get('info', {}).get('success')}")
        state = env.state()
        print("final state ->", json.dumps({k: state[k] for k in ("env_id", "seed", "step_count", "done", "episode_id")}))
        try:
            env.step({"action_id": 2} if "image" in result.observation else {"text": "answer(0)"})
            print("step after done -> accepted (unexpected)")
        except RuntimeError as e:
            print("step after done ->", e)
        print(f"RESULT ws steps={steps} return={total:.4f} done={result.done} success={result.observation.get('info', {}).get('success')}")
elif mode == "http":
    from openenv.core.client_types import StepResult
    from openenv.core.http_env_client import HTTPEnvClient

    class PlaygroundEnv(HTTPEnvClient):
        def _step_payload(self, action):
            return action

        def _parse_result(self, payload):
            return StepResult(observation=payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False))

        def _parse_state(self, payload):
            return payload

    print("client:", HTTPEnvClient.__module__, "requests-based")
    env = PlaygroundEnv(base_url=base_url)
    result = env.reset(seed=seed)
    print("reset ->", json.dumps({"observation": result.observation, "reward": result.reward, "done": result.done}))
    try:
        env.step({"bogus": True})
        print("bad action -> accepted (unexpected)")
    except Exception as e:
        print("bad action ->", type(e).__name__, e, e.response.text if getattr(e, "response", None) is not None else "")
    total, steps = 0.0, 0
    for _ in range(200):
        if result.done:
            break
        action = env.state()["expert_action"]
        result = env.step(action)
        steps += 1
        total += result.reward or 0.0
        obs = result.observation
        print(f"step {steps}: action={json.dumps(action)} reward={result.reward} done={result.done} obs.text={json.dumps(obs.get('text'))} success={obs.get('info', {}).get('success')}")
    state = env.state()
    print("final state ->", json.dumps({k: state[k] for k in ("env_id", "seed", "step_count", "done", "episode_id")}))
    try:
        env.step({"action_id": 2} if "image" in result.observation else {"text": "answer(0)"})
        print("step after done -> accepted (unexpected)")
    except Exception as e:
        print("step after done ->", type(e).__name__, e, e.response.text if getattr(e, "response", None) is not None else "")
    env.close()
    print(f"RESULT http steps={steps} return={total:.4f} done={result.done} success={result.observation.get('info', {}).get('success')}")
elif mode == "validate":
    from openenv.cli._validation import validate_running_environment

    report = validate_running_environment(base_url)
    print(json.dumps({k: report[k] for k in ("target", "standard_profile", "mode", "passed", "summary")}))
    for c in report["criteria"]:
        print(f"  {c['id']}: passed={c['passed']} actual={json.dumps(c.get('actual'))}")
