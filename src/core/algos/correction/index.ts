/**
 * The rollout-correction registry: one line per mode. The config's enums (`is`, `rs`) and the
 * form's choices are derived from this list.
 */
import { m2po } from './m2po.ts';
import { seqMeanK3 } from './seqMeanK3.ts';
import { seqSumK1 } from './seqSumK1.ts';
import { sequenceIs } from './sequenceIs.ts';
import { tokenIs } from './tokenIs.ts';
import { tokenK1 } from './tokenK1.ts';
import type { CorrectionDescriptor, IsDescriptor, MaskDescriptor, RsDescriptor } from './types.ts';

export const CORRECTIONS: readonly CorrectionDescriptor[] = [
  tokenIs,
  sequenceIs,
  tokenK1,
  seqSumK1,
  seqMeanK3,
  m2po,
];

export const IS_MODES = CORRECTIONS.filter((d): d is IsDescriptor => d.kind === 'is');
export const RS_MODES = CORRECTIONS.filter((d): d is RsDescriptor => d.kind === 'rs');
export const MASK_MODES = CORRECTIONS.filter((d): d is MaskDescriptor => d.kind === 'mask');

export function isMode(name: string): IsDescriptor | undefined {
  return IS_MODES.find((d) => d.name === name);
}
export function rsMode(name: string): RsDescriptor | undefined {
  return RS_MODES.find((d) => d.name === name);
}
