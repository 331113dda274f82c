/**
 * Numbers written as text (a link, a sweep's values, a form) that overflow: `1e400` parses to
 * Infinity, which JSON then writes as `null`, so without this check it came back to the person
 * as `lr=null`. Pure.
 */

/** True when `text` is a decimal literal too large for a double (it reads as ±Infinity). */
export function overflowsNumber(text: string): boolean {
  const t = text.trim();
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) && !Number.isFinite(Number(t));
}

/** What to tell a person who wrote such a number. */
export const overflowMessage = (text: string) => `${text.trim()} is too large for a number (beyond ±1.8e308, the largest one a double holds; it would read as Infinity)`;
