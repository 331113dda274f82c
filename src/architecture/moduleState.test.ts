/**
 * No module-level mutable bindings (top-level `let`/`var`) in the training client
 * (src/app/train/client.ts) and the training worker (src/runtime/trainWorker/worker.ts): their
 * state lives in a record made per client and per worker, so a second client (or a test) gets a
 * state of its own and a reset clears it in one place. Elsewhere in src/app and src/runtime the
 * files that still hold some are listed with their bindings: a new one, in any file, fails.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTestFile, ROOT, sourceFiles, topLevelLets } from './sources.ts';

/** Files that must hold none. */
const NONE = ['src/app/train/client.ts', 'src/runtime/trainWorker/worker.ts'];

/** Top-level lets that remain elsewhere in src/app and src/runtime, by file (lazily loaded modules and workers, caches, counters). */
const REMAINING: Record<string, string[]> = {
  'src/app/env/agentClient.ts': ['manifest', 'worker', 'loaded'],
  'src/app/rewardLab/recentBatches.ts': ['recent'],
  'src/app/rewardLab/rescore.ts': ['freezes', 'worker', 'remote'],
  'src/app/state/sharedSlices.ts': ['nextNoticeId'],
  'src/app/studio/code/studioClient.ts': ['api'],
  'src/app/train/sweep.ts': ['current'],
  'src/app/ui/MetricChart.tsx': ['frameId'],
  'src/runtime/agentWorker/worker.ts': ['session', 'ort', 'loaded', 'decoder'],
  'src/runtime/codeEnv/index.ts': ['loaded', 'fastEngine', 'defaults'],
  'src/runtime/codeEnv/quickjs.ts': ['modulePromise', 'wasm', 'wasmMemory'],
  'src/runtime/codeEnv/studioWorker.ts': ['env', 'ret', 'lastVector'],
  'src/runtime/engine/selfTest.ts': ['consoleHooked'],
  // One network thread per JS thread by design: every remote env of a rollout thread blocks on the same bridge.
  'src/runtime/openenv/link.ts': ['started', 'nextId'],
  // The platform's way to start a link thread, set once by a Node entry point (envLinks.node.ts) before any env plays.
  'src/runtime/linkThread.ts': ['starter'],
  'src/runtime/engine/web.ts': ['tinyModel'],
  'src/runtime/pool/browser.ts': ['spawned'],
  'src/runtime/pool/faultWorker.node.ts': ['collects'],
  'src/runtime/rescoreWorker/worker.ts': ['queue'],
  'src/runtime/rewardSandbox/index.ts': ['warmed'],
  'src/runtime/storage/browser.ts': ['store'],
};

describe('module-level mutable state', () => {
  it('reads top-level let and var, not const, nor a let inside a function', () => {
    const text = 'let a = 1;\nvar b;\nconst c = 2;\nexport let d = 3;\nfunction f() { let e = 4; return e; }\n';
    expect(topLevelLets('x.ts', text)).toEqual(['a', 'b', 'd']);
  });

  it('the training client and worker hold none; no other file of src/app or src/runtime gains one', () => {
    const found: Record<string, string[]> = {};
    for (const f of [...sourceFiles(join(ROOT, 'src/app')), ...sourceFiles(join(ROOT, 'src/runtime'))]) {
      if (isTestFile(f)) continue;
      const lets = topLevelLets(f, readFileSync(f, 'utf8'));
      if (lets.length) found[relative(ROOT, f)] = lets;
    }
    for (const f of NONE) expect(found[f], f).toBeUndefined();
    for (const [f, lets] of Object.entries(found)) expect(REMAINING[f] ?? [], f).toEqual(expect.arrayContaining(lets));
  });
});
