/** The hosting facts card: what this page can see about how it is served (hosting.ts says what it means). */
import { useEffect, useState } from 'react';
import { hostingFacts, type HostingFact, type HostingInput } from './hosting.ts';

/** Reads the page's own response headers and the largest same-origin script or WASM file it loaded. */
export async function readHosting(): Promise<HostingInput> {
  let coop: string | null = null;
  let coep: string | null = null;
  try {
    // The page's own headers: a same-origin response exposes them all.
    const r = await fetch(location.href, { cache: 'no-store' });
    coop = r.headers.get('cross-origin-opener-policy');
    coep = r.headers.get('cross-origin-embedder-policy');
    await r.body?.cancel();
  } catch {
    // offline or refused: the headers stay unknown (null), which reads as not sent
  }
  const entries = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
  const own = entries.filter((e) => e.name.startsWith(location.origin) && /\.(js|wasm)(\?|$)/.test(e.name) && e.decodedBodySize > 0);
  const biggest = own.sort((a, b) => b.decodedBodySize - a.decodedBodySize)[0];
  return {
    secure: window.isSecureContext,
    protocol: location.protocol,
    hostname: location.hostname,
    isolated: window.crossOriginIsolated === true,
    coop,
    coep,
    serviceWorker: !!navigator.serviceWorker?.controller,
    asset: biggest ? { name: biggest.name.split('/').pop()!.split('?')[0], encodedBytes: biggest.encodedBodySize, decodedBytes: biggest.decodedBodySize } : null,
  };
}

export function HostingFacts() {
  const [facts, setFacts] = useState<HostingFact[] | null>(null);
  useEffect(() => {
    let live = true;
    void readHosting().then((h) => live && setFacts(hostingFacts(h)));
    return () => {
      live = false;
    };
  }, []);
  return (
    <section className="check-card" data-testid="check-hosting" data-status={facts ? 'done' : 'running'}>
      <h2>How this page is served</h2>
      {!facts ? (
        <p className="muted">Reading…</p>
      ) : (
        <ul className="check-facts">
          {facts.map((f) => (
            <li key={f.id} className={f.ok ? 'check-ok' : 'check-warn'} data-testid={`hosting-${f.id}`} data-ok={f.ok}>
              <span aria-hidden>{f.ok ? '✓ ' : '! '}</span>
              {f.text}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
