/*
 * Cross-origin isolation for hosts that cannot send COOP/COEP headers (GitHub Pages, many school
 * hosts). This service worker re-serves every same-scope response with the two headers, so the
 * page gets SharedArrayBuffer and multi-threaded WASM anyway. coi.js registers it, and only when
 * the page is not isolated already. Plain JavaScript on purpose: it must be served as is, at the
 * app's root, to control the whole app's scope.
 */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  // A request the browser may only answer from its cache cannot be re-fetched across origins.
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(
    fetch(request).then((response) => {
      // Opaque responses (status 0) cannot be read or re-wrapped; they pass as they are.
      if (response.status === 0) return response;
      const headers = new Headers(response.headers);
      headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
      headers.set('Cross-Origin-Opener-Policy', 'same-origin');
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }),
  );
});
