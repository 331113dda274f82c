/**
 * The map's checks and what to do with it: solvable or why not (the BFS expert), the env
 * contract (checkEnv), a random agent's success over 100 seeds, and "Train on this map" with
 * any fitting preset's algorithm (refused, with the reason, while the map cannot be solved).
 */
import { useEffect, useMemo, useState } from 'react';
import type { GridMap } from '../../../core/envs/grid/mapSpec.ts';
import type { MapCheck } from '../../../core/envs/grid/mapCheck.ts';
import type { RandomAgentReport } from '../../../core/envs/randomAgent.ts';
import { useStore } from '../../store.ts';
import { CheckCancelled, checkMapOffPage, randomAgentOffPage } from './mapClient.ts';
import { mapPresets, trainHashForMap } from './trainLink.ts';

/** Seeds the random agent plays (one episode each). */
const RANDOM_SEEDS = 100;
/** Quiet time after the last edit before the check runs (in a worker; checkEnv plays a dozen episodes), ms. */
const CHECK_DELAY_MS = 150;

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** A map's check, or why there is none (`failed`: the worker that checks maps stopped). */
type Checked = MapCheck & { failed?: string };

/**
 * checkMap of the map, recomputed in the map-check worker a moment after the last edit (null
 * while it waits; a check for a map edited since is dropped).
 */
function useMapCheck(map: GridMap): Checked | null {
  const [check, setCheck] = useState<{ map: GridMap; check: Checked } | null>(null);
  useEffect(() => {
    let live = true;
    // A newer edit cancels a check still running (its worker is stopped, so the next starts at once).
    const cancel = new AbortController();
    const t = setTimeout(() => {
      checkMapOffPage(map, cancel.signal).then(
        (c) => live && setCheck({ map, check: c }),
        (e: Error) => live && !(e instanceof CheckCancelled) && setCheck({ map, check: { verdict: { solvable: false, reason: 'not checked' }, contract: [], refusal: `The map could not be checked: ${e.message}`, failed: e.message } }),
      );
    }, CHECK_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(t);
      cancel.abort();
    };
  }, [map]);
  const shown = check && check.map === map ? check.check : null;
  // What the map tab shows, for the lesson's check (null while it says "Checking…"). It stays in
  // the store when the tab closes: the lesson's check runs a moment after the verdict shows
  // (MAP_CHECK_DELAY_MS) and must still find it if the person has left the Studio by then; the
  // verdict carries its map, so it is never read for another one.
  useEffect(() => {
    useStore.getState().setStudioVerdict(shown && shown.failed === undefined ? { map, verdict: shown.verdict } : null);
  }, [shown, map]);
  return shown;
}

function Verdict({ check }: { check: Checked | null }) {
  if (!check) return <p className="badge badge-neutral" data-testid="map-verdict">Checking…</p>;
  if (check.failed !== undefined) return <p className="badge badge-bad" data-testid="map-verdict">Not checked: {check.failed}</p>;
  const v = check.verdict;
  return (
    <>
      {v.solvable ? (
        <p className="badge badge-good" data-testid="map-verdict">
          Solvable in {v.steps} steps
        </p>
      ) : (
        <p className="badge badge-bad" data-testid="map-verdict">
          Not solvable: {v.reason}
        </p>
      )}
      {check.contract.length === 0 ? (
        <p className="muted small" data-testid="map-contract">
          checkEnv: the env keeps the contract (same seed, same episode; observations in their space and never changed later; rewards in range; episodes end by the step limit).
        </p>
      ) : (
        <ul className="field-msg" data-testid="map-contract">
          {check.contract.slice(0, 3).map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function RandomAgent({ map }: { map: GridMap }) {
  const [report, setReport] = useState<{ map: GridMap; r: RandomAgentReport | string } | null>(null);
  const [busy, setBusy] = useState(false);
  const shown = report && report.map === map ? report.r : null;
  const play = () => {
    setBusy(true);
    randomAgentOffPage(map, RANDOM_SEEDS)
      .then((r) => setReport({ map, r }), (e: Error) => setReport({ map, r: `The random agent could not play: ${e.message}` }))
      .finally(() => setBusy(false));
  };
  return (
    <div className="studio-row">
      <button type="button" className="btn" data-testid="map-random" disabled={busy} onClick={play}>
        Random agent, {RANDOM_SEEDS} seeds
      </button>
      <span data-testid="map-random-result" aria-live="polite">
        {busy ? 'playing…' : typeof shown === 'string' ? shown : shown ? `succeeds ${pct(shown.successRate)} of ${shown.episodes} episodes · ${shown.meanSteps.toFixed(1)} steps on average` : ''}
      </span>
    </div>
  );
}

function TrainOnMap({ map, check }: { map: GridMap; check: MapCheck | null }) {
  const presets = useStore((s) => s.presets);
  const options = useMemo(() => mapPresets(presets), [presets]);
  const [presetId, setPresetId] = useState(options[0]?.id ?? '');
  const preset = options.find((p) => p.id === presetId) ?? options[0];
  const refusal = check?.refusal ?? null;
  return (
    <div className="studio-train">
      <label htmlFor="map-preset" className="field-label">
        Algorithm (from a preset)
      </label>
      <select id="map-preset" className="field-input" data-testid="map-preset" value={preset?.id ?? ''} onChange={(e) => setPresetId(e.target.value)}>
        {options.map((p) => (
          <option key={p.id} value={p.id}>
            {p.title}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="btn btn-primary"
        data-testid="map-train"
        disabled={!preset || !check || refusal !== null}
        aria-describedby="map-train-why"
        onClick={() => preset && useStore.getState().openTrain(trainHashForMap(preset, map))}
      >
        Train on this map
      </button>
      <p id="map-train-why" className="muted small" data-testid="map-train-why">
        {refusal ?? (check ? 'Opens Train with this map as the environment; press Start there.' : 'Waiting for the checks…')}
      </p>
    </div>
  );
}

export function MapChecks({ map }: { map: GridMap }) {
  const check = useMapCheck(map);
  return (
    <section className="panel studio-panel" aria-labelledby="map-check-title">
      <h2 id="map-check-title">Check and train</h2>
      <Verdict check={check} />
      <RandomAgent map={map} />
      <TrainOnMap map={map} check={check} />
    </section>
  );
}
