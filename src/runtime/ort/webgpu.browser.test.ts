/**
 * Native WebGPU EP check in a real Chromium (DESIGN §5: SwiftShader WebGPU, slow, for
 * correctness only). Opt-in, because it takes ~30 s: `WEBGPU_CHECK=1 npx vitest run
 * src/runtime/ort/webgpu.browser.test.ts`. For every preset graph it asserts, from ORT's
 * verbose log, that all nodes are placed on the WebGpuExecutionProvider (none fall back to
 * CPU), that outputs match onnxruntime-node, and that the NaN guard holds on the GPU.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as ortNode from 'onnxruntime-node';
import type { Browser, Page } from 'playwright-core';
import { buildPolicyGraph, buildTrainStep } from '../../core/graph/train.ts';
import { MODEL_PRESETS } from '../../core/models/presets.ts';
import { TransformerPolicy } from '../../core/models/transformer.ts';
import { initWeights } from '../../core/models/types.ts';
import { syntheticBatch } from '../../core/models/synthetic.ts';
import type { Graph } from '../../core/graph/builder.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const enabled = process.env.WEBGPU_CHECK === '1' && existsSync(CHROMIUM);
const DIST = join(process.cwd(), 'node_modules/onnxruntime-web/dist');

type Feeds = Record<string, Float32Array | Int32Array>;
interface Case {
  name: string;
  bytes: Uint8Array;
  feeds: Feeds;
  dims: Record<string, number[]>;
}
const cases = new Map<string, Case>();

function feedsFor(g: Graph, values: Feeds): Case['dims'] {
  const dims: Case['dims'] = {};
  for (const t of g.inputs) {
    if (!values[t.name]) throw new Error(`no value for ${t.name}`);
    dims[t.name] = [...t.shape];
  }
  return dims;
}

const PAGE = `<!doctype html><script type="module">
import * as ort from './ort.webgpu.min.mjs';
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'verbose';
window.runCase = async (name) => {
  const bytes = new Uint8Array(await (await fetch('/case/' + name + '.onnx')).arrayBuffer());
  const f = await (await fetch('/case/' + name + '.json')).json();
  const s = await ort.InferenceSession.create(bytes, { executionProviders: ['webgpu'], logSeverityLevel: 0 });
  const feeds = {};
  const num = (x) => (x === 'NaN' ? NaN : x);
  for (const [k, v] of Object.entries(f)) feeds[k] = new ort.Tensor(v.type, v.type === 'int32' ? Int32Array.from(v.data) : Float32Array.from(v.data.map(num)), v.dims);
  const r = await s.run(feeds);
  const out = {};
  for (const [k, t] of Object.entries(r)) out[k] = Array.from(await t.getData()).map((x) => (Number.isNaN(x) ? 'NaN' : x));
  await s.release();
  return out;
};
import { runSessionCheck } from './session-entry.js';
window.runSessionCheck = () => runSessionCheck(ort);
window.ready = true;
</script>`;

describe.runIf(enabled)('native WebGPU EP in Chromium (opt-in: WEBGPU_CHECK=1)', () => {
  let server: Server;
  let bundle = '';
  let browser: Browser;
  let page: Page;
  const logs: string[] = [];

  beforeAll(async () => {
    for (const id of ['mlp-76k', 'transformer-tiny']) {
      const model = MODEL_PRESETS[id].make();
      const B = id === 'mlp-76k' ? 64 : 4;
      const spec = buildTrainStep(model, { batch: B, loss: { kind: 'policy-gradient', useReference: true, entropyCoef: 0.01 } });
      const w = initWeights(model, 1);
      const feeds: Feeds = { ...syntheticBatch(spec, 1) };
      for (const s of spec.state) feeds[s.input] = s.kind === 'param' ? w[s.input] : new Float32Array(s.shape.reduce((a, b) => a * b, 1));
      for (const [k, v] of Object.entries(spec.hyper)) feeds[`hp.${k}`] = Float32Array.of(v);
      cases.set(`train-${id}`, { name: `train-${id}`, bytes: spec.graph.toOnnx(), feeds, dims: feedsFor(spec.graph, feeds) });
      const nan = { ...feeds, advantages: (feeds.advantages as Float32Array).slice() };
      (nan.advantages as Float32Array)[1] = NaN;
      cases.set(`nan-${id}`, { name: `nan-${id}`, bytes: spec.graph.toOnnx(), feeds: nan, dims: feedsFor(spec.graph, nan) });
      const pg = buildPolicyGraph(model, B);
      cases.set(`policy-${id}`, { name: `policy-${id}`, bytes: pg.toOnnx(), feeds, dims: feedsFor(pg, feeds) });
      if (model instanceof TransformerPolicy) {
        const dg = model.buildDecodeGraph(B, 1);
        const df: Feeds = { ...w, ...model.emptyCache(B), tokens: Int32Array.from({ length: B }, (_, i) => i + 1), pos: new Int32Array(B) };
        cases.set(`decode-${id}`, { name: `decode-${id}`, bytes: dg.toOnnx(), feeds: df, dims: feedsFor(dg, df) });
      }
    }
    const esbuild = await import('esbuild');
    const built = await esbuild.build({ entryPoints: [join(process.cwd(), 'src/runtime/ort/webgpuSessionEntry.ts')], bundle: true, format: 'esm', write: false, platform: 'browser' });
    bundle = built.outputFiles[0].text;
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/session-entry.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      const m = /^\/case\/(.+)\.(onnx|json)$/.exec(url);
      if (url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      if (m) {
        const c = cases.get(m[1])!;
        if (m[2] === 'onnx') return res.writeHead(200).end(c.bytes);
        const f: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(c.feeds)) {
          if (!(k in c.dims)) continue;
          f[k] = { type: v instanceof Int32Array ? 'int32' : 'float32', dims: c.dims[k], data: Array.from(v).map((x) => (Number.isNaN(x) ? 'NaN' : x)) };
        }
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(f));
      }
      const file = join(DIST, url.slice(1));
      if (!existsSync(file)) return res.writeHead(404).end();
      const type = file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript';
      return res.writeHead(200, { 'content-type': type }).end(readFileSync(file));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--enable-unsafe-webgpu'],
    });
    page = await browser.newPage();
    page.on('console', (m) => logs.push(m.text()));
    const addr = server.address();
    await page.goto(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/`);
    await page.waitForFunction('window.ready === true');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  async function runBoth(name: string) {
    const c = cases.get(name)!;
    logs.length = 0;
    const gpu = (await page.evaluate(`window.runCase(${JSON.stringify(name)})`)) as Record<string, (number | string)[]>;
    const placement = logs.filter((l) => l.includes('placed on'));
    const s = await ortNode.InferenceSession.create(c.bytes);
    const tf: Record<string, ortNode.Tensor> = {};
    for (const [k, v] of Object.entries(c.feeds)) if (k in c.dims) tf[k] = v instanceof Int32Array ? new ortNode.Tensor('int32', v, c.dims[k]) : new ortNode.Tensor('float32', v, c.dims[k]);
    const cpu = await s.run(tf);
    return { gpu, cpu, placement };
  }

  for (const name of ['train-mlp-76k', 'policy-mlp-76k', 'train-transformer-tiny', 'policy-transformer-tiny', 'decode-transformer-tiny']) {
    it(`${name}: every node on WebGPU, outputs match onnxruntime-node`, async () => {
      const { gpu, cpu, placement } = await runBoth(name);
      expect(placement.length).toBe(1);
      expect(placement[0]).toMatch(/All nodes placed on \[WebGpuExecutionProvider\]/);
      for (const [k, t] of Object.entries(cpu)) {
        const ref = t.data as Float32Array;
        let worst = 0;
        for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(ref[i] - Number(gpu[k][i])) / (1 + Math.abs(ref[i])));
        expect(worst, k).toBeLessThan(1e-5);
      }
    }, 120_000);
  }

  it('session layer on WebGPU with gpu-buffer state matches the same session on WASM', async () => {
    const r = (await page.evaluate('window.runSessionCheck()')) as Record<string, number | boolean | string>;
    console.log('webgpu session check', JSON.stringify(r));
    expect(r.stateLocation).toBe('gpu-buffer');
    expect(r.metricMaxDiff).toBeLessThan(1e-4);
    expect(r.weightMaxDiff).toBeLessThan(1e-5);
    expect(r.nanApplied).toBe(false);
    expect(r.nanWeightsChanged).toBe(false);
    expect(r.version).toBe(3);
    expect(r.decodeMaxDiff).toBeLessThan(1e-5);
  }, 300_000);

  it('NaN guard holds on the GPU: finite = 0, params and step unchanged', async () => {
    const { gpu } = await runBoth('nan-mlp-76k');
    const c = cases.get('nan-mlp-76k')!;
    expect(gpu.finite[0]).toBe(0);
    expect(gpu['next.adam.step'][0]).toBe(0);
    expect(gpu['next.l0.w'].every((x, i) => x === c.feeds['l0.w'][i])).toBe(true);
  }, 120_000);
});
