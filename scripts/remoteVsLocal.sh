#!/usr/bin/env bash
# The same run over the wire and in-process, seeds 1-3: calc-remote-grpo against `npm run serve`
# (tools/calculator, latency skip, on PORT), and its twin on tools/calculator in this process
# (the same config with env.id tools/calculator and the served kwargs). Prints each run's folder;
# metrics.jsonl holds episode/success_rate and perf/env_wire_ms per iteration.
#   bash scripts/remoteVsLocal.sh [PORT] [OUT]
set -euo pipefail
PORT=${1:-8765}
OUT=${2:-runs/remote-vs-local}
mkdir -p "$OUT"
node -e '
const c = JSON.parse(require("fs").readFileSync("presets/calc-remote-grpo.json", "utf8"));
c.id = "calc-remote-grpo-in-process";
c.env = { id: "tools/calculator", kwargs: c.env.kwargs.resetKwargs };
require("fs").writeFileSync(process.argv[1], JSON.stringify(c, null, 2));
' "$OUT/in-process.json"
node --import tsx src/cli/serve.ts --env tools/calculator --port "$PORT" --latency skip > "$OUT/serve.log" 2>&1 &
SERVE=$!
trap 'kill $SERVE' EXIT
sleep 3
for seed in 1 2 3; do
  npm run -s train -- --config calc-remote-grpo --env-url "ws://127.0.0.1:$PORT" --seed "$seed" --out "$OUT/remote-seed$seed" --force --quiet
  npm run -s train -- --config "$OUT/in-process.json" --seed "$seed" --out "$OUT/local-seed$seed" --force --quiet
done
