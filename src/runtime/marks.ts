/**
 * User-timing marks (`arl:<name>`) on the way from Start to the first iterations: worker start,
 * engine load, backend timing, session build, the first steps. `npm run bench -- tab` reads them
 * from the page and each worker to break the first iteration's time down. A handful per run,
 * never one per iteration (the browser keeps every mark).
 */
export function mark(name: string, detail?: unknown): void {
  try {
    performance.mark(`arl:${name}`, detail === undefined ? undefined : { detail });
  } catch {
    // no User Timing here (or an uncloneable detail): marks are only for measurements
  }
}
