/** The question before a remote run connects: asked once per new server, remembered on yes, refused on no. */
import { describe, expect, it } from 'vitest';
import { APPROVED_KEY, consentToConnect, notConnectedNotice, remoteAddresses, serverOrigin, staleRefusals } from './remoteConsent.ts';

function host(answers: boolean[]) {
  const store = new Map<string, string>();
  const asked: string[] = [];
  return {
    asked,
    store,
    host: {
      storage: { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) },
      ask: (q: string) => {
        asked.push(q);
        return answers.shift() ?? false;
      },
    },
  };
}

describe('remote env consent', () => {
  it('reads the addresses of the run and its stages, remote envs only, once each', () => {
    const c = { env: { id: 'remote/openenv', kwargs: { url: 'ws://127.0.0.1:8000' } }, stages: [{ env: { id: 'tools/calculator' } }, { env: { id: 'remote/openenv', kwargs: { url: 'ws://127.0.0.1:8000' } } }, { env: { id: 'remote/openenv', kwargs: { url: 'wss://hub.example/env' } } }] };
    expect(remoteAddresses(c)).toEqual(['ws://127.0.0.1:8000', 'wss://hub.example/env']);
    expect(remoteAddresses({ env: { id: 'tools/calculator' } })).toEqual([]);
    expect(serverOrigin('wss://hub.example/env/ws')).toBe('wss://hub.example');
  });

  it('asks before a new server, remembers a yes, and does not ask again for the same origin', () => {
    const h = host([true]);
    expect(consentToConnect(['ws://127.0.0.1:8000'], h.host)).toEqual({ ok: true });
    expect(h.asked).toHaveLength(1);
    expect(h.asked[0]).toMatch(/has not connected to ws:\/\/127\.0\.0\.1:8000 before/);
    expect(JSON.parse(h.store.get(APPROVED_KEY)!)).toEqual(['ws://127.0.0.1:8000']);
    // Another path on the same server: approved already.
    expect(consentToConnect(['ws://127.0.0.1:8000/tools/calculator'], h.host)).toEqual({ ok: true });
    expect(h.asked).toHaveLength(1);
    // Another port is another server.
    expect(consentToConnect(['ws://127.0.0.1:8001'], h.host)).toEqual({ ok: false, refused: 'ws://127.0.0.1:8001' });
    expect(h.asked).toHaveLength(2);
  });

  it('refuses on no, remembers nothing, and asks again next time', () => {
    const h = host([false, false]);
    expect(consentToConnect(['ws://10.0.0.5:9000'], h.host)).toEqual({ ok: false, refused: 'ws://10.0.0.5:9000' });
    expect(h.store.has(APPROVED_KEY)).toBe(false);
    consentToConnect(['ws://10.0.0.5:9000'], h.host);
    expect(h.asked).toHaveLength(2);
  });

  it('asks (and refuses without a way to ask) when storage is unreadable', () => {
    const h = host([]);
    h.store.set(APPROVED_KEY, 'not json');
    expect(consentToConnect(['ws://127.0.0.1:8000'], h.host)).toEqual({ ok: false, refused: 'ws://127.0.0.1:8000' });
  });

  it('once a start is approved, finds the refusal notices of its servers only', () => {
    const notices = [
      { id: 1, text: 'Not connected to ws://127.0.0.1:8000: nothing was started.' },
      { id: 2, text: 'Not connected to ws://127.0.0.1:8001: nothing was started.' },
      { id: 3, text: 'Fix the highlighted settings first; nothing was started.' },
      { id: 4, text: 'Not connected to wss://hub.example: nothing was started.' },
    ];
    expect(notConnectedNotice('ws://127.0.0.1:8000')).toBe(notices[0].text);
    // A path on an approved server counts as that server (the question covers the origin); port 8001 is another server.
    expect(staleRefusals(['ws://127.0.0.1:8000/tools/calculator', 'wss://hub.example/env'], notices)).toEqual([1, 4]);
    expect(staleRefusals([], notices)).toEqual([]);
  });
});
