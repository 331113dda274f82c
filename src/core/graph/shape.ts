/** Static shapes: element counts, numpy broadcasting and axis normalisation for the graph builder. */
export type Shape = readonly number[];

export const numel = (s: Shape): number => s.reduce((a, b) => a * b, 1);
export const sameShape = (a: Shape, b: Shape): boolean => a.length === b.length && a.every((d, i) => d === b[i]);
export const fmt = (s: Shape): string => `[${s.join(',')}]`;
export const normAxis = (axis: number, rank: number): number => {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new RangeError(`axis ${axis} out of range for rank ${rank}`);
  return a;
};

/** numpy broadcasting of two or more shapes; throws with both shapes on mismatch. */
export function broadcastShapes(...shapes: Shape[]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 0; i < rank; i++) {
    let d = 1;
    for (const s of shapes) {
      const k = s.length - rank + i;
      const v = k < 0 ? 1 : s[k];
      if (v !== 1 && d !== 1 && v !== d) throw new RangeError(`cannot broadcast shapes ${shapes.map(fmt).join(' and ')}`);
      if (v !== 1) d = v;
    }
    out.push(d);
  }
  return out;
}
