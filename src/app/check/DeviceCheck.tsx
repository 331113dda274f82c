/**
 * Device check: a workshop host opens this on a laptop before a session. One click times every
 * lesson's setup and gives a verdict per lesson (LessonCheck); the hosting facts show on load; the
 * engine details (below) show which backend the playground will use, whether our graphs run
 * entirely on WebGPU, whether WebGPU and WASM agree, and how fast a train step is.
 * `?models=mlp-76k` limits the engine details to the listed models (no session-layer check, which needs both).
 */
import { useCallback, useEffect, useState } from 'react';
import { describeBackend, detectBackend, type BackendReport } from '../../runtime/backend.ts';
import type { SelfTestModel, SelfTestReport } from '../../runtime/engine/selfTest.ts';
import { HostingFacts } from './HostingFacts.tsx';
import { LessonCheck } from './LessonCheck.tsx';
import { CHECK_BUDGET_MS, PresetTimingsTable, timePresets, type PresetTiming } from './PresetTimings.tsx';
import { SelfTestSection, type Status } from './SelfTestReport.tsx';

/** `?models=a,b`: the self-test's models (undefined: all of them). */
function onlyModels(): SelfTestModel[] | undefined {
  const raw = new URLSearchParams(location.search).get('models');
  return raw ? (raw.split(',').filter(Boolean) as SelfTestModel[]) : undefined;
}

/** The backend detected on load; the self-test, then the playground's own backend timing, run on demand (or on load with `autorun`). */
function useEngineCheck(autorun: boolean) {
  const [backend, setBackend] = useState<BackendReport | null>(null);
  const [status, setStatus] = useState<Status>('idle');
  const [report, setReport] = useState<SelfTestReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [choices, setChoices] = useState<PresetTiming[]>([]);
  const [choiceStatus, setChoiceStatus] = useState<Status>('idle');

  useEffect(() => {
    detectBackend().then(setBackend, (e: Error) => setError(e.message));
  }, []);

  const run = useCallback(async () => {
    setStatus('running');
    setError(null);
    try {
      // Loaded on demand: the engine and onnxruntime are large and only this button needs them.
      const { runSelfTest, SELF_TEST_MODELS } = await import('../../runtime/engine/selfTest.ts');
      const only = onlyModels();
      const unknown = only?.filter((m) => !(SELF_TEST_MODELS as readonly string[]).includes(m)) ?? [];
      if (unknown.length) throw new Error(`?models=: unknown model ${unknown.join(', ')} (known: ${SELF_TEST_MODELS.join(', ')})`);
      const r = await runSelfTest({ only });
      setReport(r);
      setStatus(r.errors.length ? 'failed' : 'done');
    } catch (e) {
      setError((e as Error).message);
      setStatus('failed');
    }
    // Then the playground's own choice (in workers, after the self-test so the two never compete).
    const b = await detectBackend();
    setChoices([]);
    setChoiceStatus('running');
    await timePresets(b, (t) => setChoices((cs) => [...cs, t]));
    setChoiceStatus('done');
  }, []);

  useEffect(() => {
    if (!autorun) return;
    const id = setTimeout(() => void run(), 0);
    return () => clearTimeout(id);
  }, [run, autorun]);
  return { backend, status, report, error, choices, choiceStatus, run };
}

function EngineCheck({ autorun }: { autorun: boolean }) {
  const { backend, status, report, error, choices, choiceStatus, run } = useEngineCheck(autorun);

  return (
    <>
      <section className="check-card">
        <h2>Engine details</h2>
        <p className="muted">
          For a closer look (about 80 s): where each node of our graphs runs on WebGPU, whether WebGPU and WASM give the same update, and the backend timing a run&apos;s first start makes.
        </p>
        <p data-testid="check-backend">{backend ? describeBackend(backend) : 'detecting…'}</p>
        <button className="btn" onClick={run} disabled={status === 'running'} data-testid="check-engine-run">
          {status === 'running' ? 'Running…' : report ? 'Run the engine check again' : 'Run the engine check'}
        </button>
      </section>
      {error && <p className="check-error">{error}</p>}
      <section className="check-card" data-testid="check-choice-section" data-status={choiceStatus}>
        <h2>Which backend the playground picks</h2>
        <p className="muted">
          What a run&apos;s first start measures: a few train steps and rollout calls of the preset&apos;s own model on each backend, in a worker. Here a software
          WebGPU adapter is timed too (a start skips it: it is never picked unless forced), within {(CHECK_BUDGET_MS / 1000).toFixed(0)} s per preset.
        </p>
        {choices.length === 0 ? <p className="muted">{choiceStatus === 'running' ? 'Timing…' : 'Runs with the engine check.'}</p> : <PresetTimingsTable rows={choices} />}
      </section>
      <SelfTestSection status={status} report={report} />
    </>
  );
}

/**
 * `?autorun` runs the one-click lesson check on load; `?autorun=engine` runs the engine details
 * instead (the e2e tests of WebGPU placement and agreement).
 */
export function DeviceCheck() {
  const autorun = new URLSearchParams(location.search).get('autorun');
  return (
    <main className="check-page">
      <header className="check-header">
        <a href="./">← Agentic RL Playground</a>
        <h1>Device check</h1>
        <p>For a workshop host, on the laptops students will use: how long each lesson takes here, and what this page can see about how it is served.</p>
      </header>
      <LessonCheck autorun={autorun === '' || autorun === 'lessons'} />
      <HostingFacts />
      <EngineCheck autorun={autorun === 'engine'} />
    </main>
  );
}
