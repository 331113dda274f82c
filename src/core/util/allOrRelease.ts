/**
 * `Promise.all` for parts that hold resources (ONNX sessions, workers): when one part fails to
 * build, the parts that were built are released before the first failure is rethrown, so a failed
 * start (say, a learner that does not fit in GPU memory) leaves no decoder session behind.
 */

/** Something that holds a resource (a rollout pool closes); `null` stands for an absent optional part. */
type Releasable = { release(): unknown } | { close(): unknown } | null;

const free = (p: Releasable) => (p === null ? undefined : 'release' in p ? p.release() : p.close());

export async function allOrRelease<const T extends readonly Releasable[]>(parts: { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(parts);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<Releasable>).value) as unknown as T;
  await Promise.allSettled(settled.map(async (s) => (s.status === 'fulfilled' ? free(s.value) : undefined)));
  throw failed.reason;
}
