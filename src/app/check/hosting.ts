/**
 * The hosting facts a page can see about how it is served, pure: secure context or not, cross-origin
 * isolated or not and why, compressed assets or not. The page gathers the inputs (readHosting in
 * HostingFacts.tsx); this turns them into what a host should read and do.
 */
import { insecureContextText } from '../../runtime/backend.ts';

export interface HostingInput {
  /** `window.isSecureContext`. */
  secure: boolean;
  /** `location.protocol`, e.g. 'http:'. */
  protocol: string;
  /** `location.hostname`. */
  hostname: string;
  /** `window.crossOriginIsolated`. */
  isolated: boolean;
  /** The page's own response headers (lower-case values; null when the header is absent or unread). */
  coop: string | null;
  coep: string | null;
  /** Whether the isolating service worker (coi-sw.js) controls this page. */
  serviceWorker: boolean;
  /** The largest same-origin script or WASM file this page loaded, as the Resource Timing API saw it; null when none was measurable. */
  asset: { name: string; encodedBytes: number; decodedBytes: number } | null;
}

export interface HostingFact {
  id: 'secure' | 'isolated' | 'compressed';
  ok: boolean;
  text: string;
}

const mb = (b: number) => `${(b / 1e6).toFixed(b >= 1e7 ? 0 : 1)} MB`;

export function hostingFacts(h: HostingInput): HostingFact[] {
  const facts: HostingFact[] = [];
  facts.push(
    h.secure
      ? { id: 'secure', ok: true, text: `Secure context (${h.protocol === 'https:' ? 'HTTPS' : 'localhost'}): WebGPU and threads are allowed.` }
      : { id: 'secure', ok: false, text: `${insecureContextText(h.protocol, h.hostname).replace(/^t/, 'T')}.` },
  );
  if (h.isolated) {
    facts.push({
      id: 'isolated',
      ok: true,
      text: h.serviceWorker
        ? 'Cross-origin isolated through the service worker (coi-sw.js adds COOP/COEP the host does not send); WASM runs multi-threaded.'
        : h.coop && h.coep
          ? `Cross-origin isolated: the host sends COOP ${h.coop} and COEP ${h.coep}; WASM runs multi-threaded.`
          : 'Cross-origin isolated: WASM runs multi-threaded.',
    });
  } else {
    const missing = [h.coop !== 'same-origin' ? 'Cross-Origin-Opener-Policy: same-origin' : null, !h.coep ? 'Cross-Origin-Embedder-Policy: require-corp' : null].filter(Boolean);
    const why = missing.length ? `the host does not send ${missing.join(' and ')}` : 'the headers arrive but the browser did not isolate the page';
    const sw = !h.secure ? ' and the service-worker fallback needs a secure context' : ' and the service-worker fallback is off (?coi=0) or not active yet';
    facts.push({ id: 'isolated', ok: false, text: `Not cross-origin isolated: ${why}${sw}. WASM runs single-threaded (slower training); send those headers (docs/hosting.md).` });
  }
  const a = h.asset;
  if (!a || a.decodedBytes === 0) facts.push({ id: 'compressed', ok: false, text: 'Compression unknown: no file of this page had a measurable size (from the browser cache, or the server sent no Timing-Allow data).' });
  else if (a.encodedBytes < a.decodedBytes * 0.9)
    facts.push({ id: 'compressed', ok: true, text: `Compressed assets served: ${a.name} came as ${mb(a.encodedBytes)} for ${mb(a.decodedBytes)} (${Math.round((100 * a.encodedBytes) / a.decodedBytes)}%).` });
  else facts.push({ id: 'compressed', ok: false, text: `Assets served uncompressed: ${a.name} came as ${mb(a.encodedBytes)}, its full size. Serve the .br/.gz files beside it (docs/hosting.md): a student then downloads 3.1 MB instead of 16.9 MB.` });
  return facts;
}
