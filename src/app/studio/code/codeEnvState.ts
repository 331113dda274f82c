/**
 * The Code tab's state, split by concern: the editor's text with its check and the random
 * agent (useCodeCheck), and the code envs saved in this browser (useSavedCodeEnvs).
 */
import { useCallback, useEffect, useState } from 'react';
import type { RandomAgentResult, StudioCheck } from '../../../runtime/codeEnv/studioWorker.ts';
import { useStore } from '../../store.ts';
import { CODE_ENV_EXAMPLES } from './examples.ts';
import { codeStudio, messageOf } from './studioClient.ts';
import { readSavedCode } from './saved.ts';
import { browserRunStore } from '../../../runtime/storage/browser.ts';
import { deleteDesign, listDesigns, newDesignId, saveDesign, type DesignRecord } from '../../../runtime/storage/designs.ts';

/** Where the person's own code is kept between visits. */
const STORAGE_KEY = 'studio.codeEnv';
/** Seeds the random agent plays. */
export const RANDOM_EPISODES = 100;

/** Where the code came from when it must be reviewed before it runs; null: the person's own. */
export type Pending = 'link' | 'file' | null;

/** The person's own code, last saved, or the first example. */
export function ownCode(): string {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? CODE_ENV_EXAMPLES[0].code;
  } catch {
    return CODE_ENV_EXAMPLES[0].code;
  }
}

/** The editor's text, whether it awaits review, its last check and the random agent's result. */
export function useCodeCheck(incoming: { code: string; from: 'link' | 'file' } | null) {
  const [text, setText] = useState(() => incoming?.code ?? ownCode());
  const [pending, setPending] = useState<Pending>(incoming?.from ?? null);
  const [check, setCheck] = useState<(StudioCheck & { code: string }) | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [random, setRandom] = useState<RandomAgentResult | null>(null);

  // One check in the code worker's sandbox; its failure (the worker's, not the code's problems) shown apart.
  const runCheck = async (code: string) => {
    setBusy('Checking…');
    try {
      setCheck({ ...(await codeStudio().check(code)), code });
    } catch (e) {
      setFailure(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  const save = async (code = text) => {
    if (pending) return;
    setBusy('Checking…');
    setFailure(null);
    setRandom(null);
    try {
      localStorage.setItem(STORAGE_KEY, code);
    } catch {
      // Storage full or blocked: the check still runs; the code stays in the editor.
    }
    await runCheck(code);
  };
  // Run is the person's consent: the first check (the first execution) happens only here.
  const checkReviewed = () => runCheck(text);
  const randomAgent = async () => {
    setBusy(`Random agent: ${RANDOM_EPISODES} episodes…`);
    setFailure(null);
    try {
      setRandom(await codeStudio().random(text, RANDOM_EPISODES));
    } catch (e) {
      setFailure(messageOf(e));
    } finally {
      setBusy(null);
    }
  };
  // New text that has not been checked: the old check and random result no longer describe it.
  const replace = (code: string) => {
    setText(code);
    setCheck(null);
    setRandom(null);
  };
  return { text, setText, pending, setPending, check, busy, failure, random, save, checkReviewed, randomAgent, replace };
}

/** The code envs saved in this browser, newest first, the record the editor's code came from, and saving. */
export function useSavedCodeEnvs(text: string, name: string) {
  const [saved, setSaved] = useState<DesignRecord[]>([]);
  /** The saved record the editor's code came from (Save replaces it), or null (Save adds one). */
  const [savedId, setSavedId] = useState<string | null>(null);
  const reload = useCallback(() => {
    const store = browserRunStore();
    if (store) listDesigns(store, 'code').then(setSaved, (e: Error) => useStore.getState().notify('error', `Could not list saved code envs: ${e.message}`));
  }, []);
  useEffect(reload, [reload]);

  const saveInBrowser = async () => {
    const store = browserRunStore();
    const notify = useStore.getState().notify;
    if (!store) return notify('error', 'This browser has no IndexedDB here (a private window?): export the env as .js instead.');
    const id = savedId ?? newDesignId();
    try {
      await saveDesign(store, { id, kind: 'code', name, updatedAt: Date.now(), data: { code: text } });
      setSavedId(id);
      reload();
      notify('info', `Saved "${name}" in this browser.`);
    } catch (e) {
      notify('error', `Could not save the code env: ${(e as Error).message}. Export it as .js to keep it.`);
    }
  };
  /** The saved record's code, or null (after a notice) when the record is damaged. */
  const readSaved = (d: DesignRecord): string | null => {
    const r = readSavedCode(d.data);
    if ('problem' in r) {
      useStore.getState().notify('error', `The saved code env "${d.name}" is damaged: ${r.problem}.`);
      return null;
    }
    setSavedId(d.id);
    return r.code;
  };
  const remove = (d: DesignRecord) =>
    void deleteDesign(browserRunStore()!, d.id).then(() => {
      if (d.id === savedId) setSavedId(null);
      reload();
    });
  return { saved, savedId, setSavedId, saveInBrowser, readSaved, remove };
}
