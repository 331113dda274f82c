import type { LessonInput } from '../schema.ts';

/** The env on a server: the same training, every reset and step an OpenEnv message (docs/remote-envs.md). */
export default {
  id: 'over-the-wire',
  title: 'The same env, over the wire',
  summary: 'Environments increasingly live on servers and hubs (OpenEnv). Train the calculator served by the playground\'s own env server, and compare with the run in the tab.',
  takeaway: 'Where the env runs does not change what the policy learns: the same seeds give the same episodes, so the curve has the shape of the in-process run, within its seeds\' spread. What changes is time: each step waits one round trip, which the Speed section shows. docs/remote-envs.md gives both runs, 3 seeds each.',
  steps: [
    {
      title: 'The same env, over the wire',
      text: 'Now the calculator runs on a server, as an env on a hub would: start the playground\'s own env server in a terminal (npm run serve -- --env tools/calculator; it listens on ws://127.0.0.1:8000) and train the same kind of run against it. Every reset and step is an OpenEnv message to the server, and each episode holds its own session; the policy, the warm start and GRPO are unchanged (one-digit questions here, so it trains in minutes). The page asks before it connects to a server it has not connected to before. The curve has the shape of an in-process run\'s; the Speed section\'s "Env latency (network)" chart shows what each step costs on the wire. Stop the server mid-run and the run stops with a named error, saved in Runs.',
      action: 'Start npm run serve -- --env tools/calculator, then press Start and answer the question about the server.',
      setup: { preset: 'calc-remote-grpo', overrides: [] },
      check: {
        all: [{ metric: 'episode/success_rate', op: '>=', value: 0.8 }],
        for: 3,
        within: 10,
        says: 'sampled success at least 0.8 over the wire, 3 iterations in a row',
      },
    },
  ],
} satisfies LessonInput;
