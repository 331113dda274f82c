/** Code links reach the Code tab through the store, at page open and when pasted into an open tab. */
import { beforeEach, describe, expect, it } from 'vitest';
import { useStore } from '../store.ts';
import { codeEnvLink, CODE_LINK_PREFIX } from './code/link.ts';

const s = () => useStore.getState();

beforeEach(() => useStore.setState({ notices: [], codeLink: null }));

describe('studio code links', () => {
  it('each code link opens the Code tab with its code, numbered, until the person settles it', () => {
    s().openStudio(codeEnvLink('export const a = 1;'));
    expect(s().view).toBe('studio');
    expect(s().studioTab).toBe('code');
    expect(s().codeLink).toEqual({ code: 'export const a = 1;', seq: 1, used: false });
    s().settleCodeLink();
    expect(s().codeLink).toEqual({ code: 'export const a = 1;', seq: 1, used: true });
    // A second link, pasted into the open tab: a new number, offered again.
    s().openStudio(codeEnvLink('export const b = 2;'));
    expect(s().codeLink).toEqual({ code: 'export const b = 2;', seq: 2, used: false });
    // A studio link without code keeps what was there.
    s().openStudio('#view=studio&tab=map');
    expect(s().codeLink?.seq).toBe(2);
  });

  it("a Train link on a code env opens the Code tab with that env's code", () => {
    const train = `#view=train&preset=grid-empty-8x8-grpo&env.id=code/custom&env.kwargs.code=${encodeURIComponent('export const c = 3;')}`;
    s().openStudio(CODE_LINK_PREFIX, train);
    expect([s().studioTab, s().codeLink?.code]).toEqual(['code', 'export const c = 3;']);
  });

  it('code that cannot be read is named once, and nothing is offered', () => {
    s().openStudio(`${CODE_LINK_PREFIX}&code=%E0%A4%A`);
    expect(s().codeLink).toBeNull();
    expect(s().notices.map((n) => n.text)).toEqual(['Ignored part of the link: could not decode "code=%E0%A4%A".']);
    useStore.setState({ notices: [] });
    s().openStudio(CODE_LINK_PREFIX, `#view=train&env.id=code/custom&env.kwargs.code=%E0%A4%A`);
    expect(s().codeLink).toBeNull();
    expect(s().notices.map((n) => n.text)).toEqual(["Ignored the link's code: the link’s code is not valid URI encoding (was it cut off?)."]);
  });
});
