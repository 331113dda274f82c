/*
 * Makes the page cross-origin isolated where the host sends no COOP/COEP headers: registers
 * coi-sw.js (which adds them) and reloads once when it takes control. Does nothing where the page
 * is isolated already, outside a secure context, without service workers, or with ?coi=0 in the
 * address. A classic script, loaded before the app, so the reload happens before the app starts.
 */
(function () {
  var FLAG = 'arl.coi-reloaded';
  if (window.crossOriginIsolated) {
    sessionStorage.removeItem(FLAG);
    return;
  }
  if (!window.isSecureContext || !('serviceWorker' in navigator)) return;
  if (new URLSearchParams(location.search).get('coi') === '0') return;
  var reloadOnce = function () {
    // One reload per tab session: a browser that ignores the worker's headers never loops.
    if (sessionStorage.getItem(FLAG)) return;
    sessionStorage.setItem(FLAG, '1');
    location.reload();
  };
  var script = document.currentScript;
  navigator.serviceWorker.register(new URL('coi-sw.js', script ? script.src : location.href)).then(
    function (registration) {
      if (navigator.serviceWorker.controller) reloadOnce();
      else {
        navigator.serviceWorker.addEventListener('controllerchange', reloadOnce);
        if (registration.active) reloadOnce();
      }
    },
    function (error) {
      console.warn('cross-origin isolation service worker not registered (WASM stays single-threaded):', error);
    },
  );
})();
