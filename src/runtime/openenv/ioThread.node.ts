/** The network thread of remote envs in Node (a worker_thread; link.ts starts it through ../envLinks.node.ts). Node 20 has no global WebSocket: the ws package's. */
import { parentPort } from 'node:worker_threads';
import WebSocket from 'ws';
import { sessionHandler } from './ioHandler.ts';
import { serveBridge } from './syncBridge.ts';
import type { WsConstructor } from './wsChannel.ts';

if (!parentPort) throw new Error('ioThread.node.ts must run in a worker thread');
const port = parentPort;
port.once('message', (m: { buffer: SharedArrayBuffer }) => {
  serveBridge(m.buffer, sessionHandler(WebSocket as unknown as WsConstructor));
  // Waiting on the buffer alone does not keep a worker's event loop alive; the parent unrefs this thread, so it never holds the process.
  setInterval(() => undefined, 1 << 30);
  port.postMessage('ready');
});
