/**
 * A real rollout worker (createWorkerApi) that misbehaves on its n-th collect, for the pool's
 * failure tests: `workerData = { fault: 'throw' | 'crash' | 'exit' | 'hang', onCollect: n }`.
 *   throw  collect rejects with an error (the worker lives: a batch error, not a worker failure)
 *   crash  an uncaught error in the worker thread
 *   exit   the thread exits with code 3
 *   hang   collect never answers (the worker's event loop stays idle: it answers pings)
 *   silent the worker goes quiet as a browser worker that closes itself does: no message in or
 *          out, no exit, no error (its port is closed; a timer keeps the thread alive)
 *   spin   the thread spins in a synchronous loop from then on (answers nothing, ever)
 */
import { expose } from 'comlink';
import { parentPort, workerData } from 'node:worker_threads';
import { loadNodeEngine } from '../engine/node.ts';
import { nodeEndpoint } from './nodeEndpoint.ts';
import { createWorkerApi } from './workerApi.ts';

if (!parentPort) throw new Error('faultWorker.node.ts must run in a worker thread');
const { fault, onCollect } = workerData as { fault: 'throw' | 'crash' | 'exit' | 'hang' | 'silent' | 'spin'; onCollect: number };
const api = createWorkerApi(() => loadNodeEngine('ort-web-wasm', 1));
let collects = 0;
const collect = api.collect;
api.collect = async (req) => {
  if (++collects === onCollect) {
    if (fault === 'throw') throw new Error('env step failed (injected)');
    if (fault === 'crash') setTimeout(() => {
      throw new Error('boom (injected crash)');
    });
    if (fault === 'exit') setTimeout(() => process.exit(3));
    if (fault === 'silent') {
      setInterval(() => undefined, 60_000);
      setTimeout(() => parentPort!.close());
    }
    if (fault === 'spin') {
      setTimeout(() => {
        for (;;) {
          // spins until terminated
        }
      });
    }
    return new Promise<never>(() => undefined);
  }
  return collect(req);
};
expose(api, nodeEndpoint(parentPort));
