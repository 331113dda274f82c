/** The network thread of remote envs in the browser (a module Web Worker; link.ts starts it). */
import { sessionHandler } from './ioHandler.ts';
import { serveBridge } from './syncBridge.ts';

self.addEventListener(
  'message',
  (e: MessageEvent<{ buffer: SharedArrayBuffer }>) => {
    serveBridge(e.data.buffer, sessionHandler());
    self.postMessage('ready');
  },
  { once: true },
);
