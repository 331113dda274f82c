/** Reading the task text of a tool env for the UI (the env states its tools in the task). */

/** Tool signatures listed after `tools:` in a task, e.g. `["calc(expression)", "answer(number)"]`. */
export function toolsFromTask(task: string): string[] {
  // Signatures never contain a period, so the list runs to the next one.
  const m = /\btools: ([^.]*)/i.exec(task);
  if (!m) return [];
  return m[1]
    .split(/,\s*/)
    .map((t) => t.trim())
    .filter((t) => /^[a-z_][a-z0-9_]*\([^()]*\)$/i.test(t));
}
