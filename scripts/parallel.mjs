#!/usr/bin/env node
/**
 * Runs npm scripts at the same time and fails if any fails: `node scripts/parallel.mjs typecheck lint`.
 * tsc and ESLint are each single-threaded, so on a 2-core CI machine side by side they take the
 * longer one's time instead of the sum. Each script's output is held and printed whole when it
 * ends (never interleaved), in the order they end, with its status.
 */
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/parallel.mjs SCRIPT [SCRIPT ...]  (npm script names)');
  process.exit(2);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs `npm run NAME`; resolves with its exit status once its output has been printed. */
function run(name) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(npm, ['run', name], { stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    let ended = false;
    const done = (code) => {
      if (ended) return;
      ended = true;
      const s = ((performance.now() - t0) / 1000).toFixed(1);
      process.stdout.write(`\n> npm run ${name} (${code === 0 ? 'ok' : `failed, status ${code}`}, ${s} s)\n`);
      process.stdout.write(Buffer.concat(out));
      resolve(code);
    };
    child.on('error', (e) => {
      out.push(Buffer.from(`${e.message}\n`));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

const codes = await Promise.all(names.map(run));
process.exit(codes.some((c) => c !== 0) ? 1 : 0);
