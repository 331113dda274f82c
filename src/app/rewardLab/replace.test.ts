/** A link or preset never silently replaces the reward code the person applied themselves. */
import { beforeEach, describe, expect, it } from 'vitest';
import { adoptRewardCode, answerReplace, restoreOwnCode, setOwnCode, useRewardLab } from './rewardLab.ts';

const MINE = 'export const mine = (step) => 1;';
const LINK = 'export const closer = (step) => 0.1;';
const lab = () => useRewardLab.getState();

beforeEach(() => {
  useRewardLab.setState({ text: '', applied: '', mine: '', replacing: null });
});

describe('reward code from a link over the person\'s own', () => {
  it('asks first; "keep mine" keeps it applied and in the editor', () => {
    lab().setText(MINE);
    setOwnCode(MINE);
    adoptRewardCode(LINK);
    expect(lab().replacing).toEqual({ code: LINK });
    expect(lab().applied).toBe(MINE);
    expect(lab().text).toBe(MINE);
    answerReplace(false);
    expect(lab()).toMatchObject({ replacing: null, applied: MINE, text: MINE, mine: MINE });
  });

  it('"use the link\'s" applies it, and the person\'s code is one click away', () => {
    lab().setText(MINE);
    setOwnCode(MINE);
    adoptRewardCode(LINK);
    answerReplace(true);
    expect(lab()).toMatchObject({ replacing: null, applied: LINK, text: LINK, mine: MINE });
    restoreOwnCode();
    expect(lab()).toMatchObject({ applied: MINE, text: MINE });
  });

  it('no question without code of the person\'s own, for the same code, or for a preset without code', () => {
    adoptRewardCode(LINK);
    expect(lab()).toMatchObject({ replacing: null, applied: LINK });
    setOwnCode(MINE);
    adoptRewardCode(MINE);
    expect(lab().replacing).toBeNull();
    adoptRewardCode('');
    expect(lab()).toMatchObject({ replacing: null, applied: '' });
  });
});
