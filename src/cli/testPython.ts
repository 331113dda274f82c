/** Test helper: whether this machine has a `python3` to run (tests of the exported Python skip without one). */
import { execFileSync } from 'node:child_process';

export const hasPython = (() => {
  try {
    execFileSync('python3', ['-c', 'pass']);
    return true;
  } catch {
    return false;
  }
})();
