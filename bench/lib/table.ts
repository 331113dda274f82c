/** Plain-text table with right-aligned numeric columns. */
export function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [header, ...rows].map((r) => r.map(String));
  const widths = header.map((_, j) => Math.max(...cells.map((r) => (r[j] ?? '').length)));
  const line = (r: readonly string[], isHeader: boolean): string =>
    r
      .map((c, j) => (isHeader || typeof rows[0]?.[j] !== 'number' ? c.padEnd(widths[j]) : c.padStart(widths[j])))
      .join('  ')
      .trimEnd();
  return [line(cells[0], true), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map((r) => line(r, false))].join('\n');
}
