/**
 * Keyboard controls for grid worlds. Actions are found by their label in the env's action
 * space (MiniGrid names), so an env that orders or names actions differently still gets the
 * right keys, and an action without a key is simply left to its button.
 */
import type { Space } from '../../core/envs/spaces.ts';

export interface KeyBinding {
  /** `KeyboardEvent.key` values that trigger the action. */
  keys: readonly string[];
  /** How the key is printed on screen. */
  caption: string;
  /** Action label in the env's discrete action space. */
  label: string;
}

export const GRID_KEYS: readonly KeyBinding[] = [
  { keys: ['ArrowLeft'], caption: '←', label: 'left' },
  { keys: ['ArrowRight'], caption: '→', label: 'right' },
  { keys: ['ArrowUp'], caption: '↑', label: 'forward' },
  { keys: ['p', 'P'], caption: 'P', label: 'pickup' },
  { keys: ['d', 'D'], caption: 'D', label: 'drop' },
  { keys: [' ', 'Spacebar'], caption: 'Space', label: 'toggle' },
  { keys: ['Enter'], caption: 'Enter', label: 'done' },
];

/** One button per action: its index, label, and the key that triggers it (if any). */
export interface ActionButton {
  action: number;
  label: string;
  caption: string | null;
}

/** Action labels of a discrete space; `action i` where the env gave no names. */
export function actionLabels(space: Space): string[] {
  if (space.kind !== 'discrete') return [];
  return Array.from({ length: space.n }, (_, i) => space.labels?.[i] ?? `action ${i}`);
}

export function actionButtons(space: Space): ActionButton[] {
  return actionLabels(space).map((label, action) => ({
    action,
    label,
    caption: GRID_KEYS.find((b) => b.label === label)?.caption ?? null,
  }));
}

/** The action a key press means in this space, or null when the key is not bound. */
export function actionForKey(space: Space, key: string): number | null {
  const binding = GRID_KEYS.find((b) => b.keys.includes(key));
  if (!binding) return null;
  const i = actionLabels(space).indexOf(binding.label);
  return i >= 0 ? i : null;
}
