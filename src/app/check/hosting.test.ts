import { describe, expect, it } from 'vitest';
import { hostingFacts, type HostingInput } from './hosting.ts';
import { detectBackend, insecureContextText } from '../../runtime/backend.ts';

const base: HostingInput = {
  secure: true,
  protocol: 'https:',
  hostname: 'class.example.org',
  isolated: true,
  coop: 'same-origin',
  coep: 'require-corp',
  serviceWorker: false,
  asset: { name: 'index-abc.js', encodedBytes: 150_000, decodedBytes: 600_000 },
};
const fact = (h: HostingInput, id: string) => hostingFacts(h).find((f) => f.id === id)!;

describe('hosting facts', () => {
  it('a good host: secure, isolated by its headers, compressed (25% of the size)', () => {
    expect(hostingFacts(base).every((f) => f.ok)).toBe(true);
    expect(fact(base, 'isolated').text).toMatch(/the host sends COOP same-origin and COEP require-corp/);
    expect(fact(base, 'compressed').text).toMatch(/0\.1 MB for 0\.6 MB \(25%\)/);
  });

  it('http on a LAN address: not a secure context, and it says what to do', () => {
    const f = fact({ ...base, secure: false, protocol: 'http:', hostname: '192.168.1.20' }, 'secure');
    expect(f.ok).toBe(false);
    expect(f.text).toBe('This page is not a secure context (http on a LAN address): browsers withhold WebGPU and threads; serve it over HTTPS or from localhost.');
  });

  it('no COOP/COEP: not isolated, names both missing headers and why the service worker did not help', () => {
    const f = fact({ ...base, isolated: false, coop: null, coep: null, secure: false, protocol: 'http:', hostname: '10.0.0.5' }, 'isolated');
    expect(f.ok).toBe(false);
    expect(f.text).toMatch(/does not send Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp and the service-worker fallback needs a secure context/);
    const onlyCoep = fact({ ...base, isolated: false, coep: null }, 'isolated');
    expect(onlyCoep.text).toMatch(/does not send Cross-Origin-Embedder-Policy: require-corp and the service-worker fallback is off/);
  });

  it('isolated through the service worker says so, not that the host sends the headers', () => {
    expect(fact({ ...base, serviceWorker: true }, 'isolated').text).toMatch(/through the service worker/);
  });

  it('an uncompressed asset (encoded = decoded) and an unmeasurable one', () => {
    const u = fact({ ...base, asset: { name: 'a.js', encodedBytes: 600_000, decodedBytes: 600_000 } }, 'compressed');
    expect(u.ok).toBe(false);
    expect(u.text).toMatch(/^Assets served uncompressed/);
    expect(fact({ ...base, asset: null }, 'compressed').text).toMatch(/^Compression unknown/);
  });

  it('loopback http is named as http, other schemes by their name', () => {
    expect(insecureContextText('http:', '127.0.0.2')).toMatch(/\(http\)/);
    expect(insecureContextText('file:', '')).toMatch(/\(file address\)/);
  });
});

describe('detectBackend without navigator.gpu', () => {
  it('blames the insecure context, not the browser, on a LAN address over http', async () => {
    const g = globalThis as Record<string, unknown>;
    const saved = { isSecureContext: g.isSecureContext, location: g.location };
    try {
      g.isSecureContext = false;
      g.location = { protocol: 'http:', hostname: '192.168.0.7' };
      const r = await detectBackend();
      expect(r.webgpu.reason).toBe('this page is not a secure context (http on a LAN address): browsers withhold WebGPU and threads; serve it over HTTPS or from localhost');
      g.isSecureContext = true;
      expect((await detectBackend()).webgpu.reason).toBe('this browser has no WebGPU (navigator.gpu is missing)');
    } finally {
      g.isSecureContext = saved.isSecureContext;
      g.location = saved.location;
    }
  });
});
