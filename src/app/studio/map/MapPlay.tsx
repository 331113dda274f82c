/**
 * Playing the map by hand or watching the expert: the Environments view's viewer, on the map.
 * Play takes the keyboard focus when it opens, and its buttons do not keep it after a click, so
 * Space is the game's toggle (before, Space pressed the focused "Play this map" button again,
 * which left play mode and lost the episode).
 */
import { useEffect, useRef } from 'react';
import { mapToKwargs, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { ExpertControls, keepFocus } from '../../env/EpisodeControls.tsx';
import { EpisodeStatus } from '../../env/EpisodeStatus.tsx';
import { GridView } from '../../env/GridView.tsx';
import { useStore } from '../../store.ts';

export function MapPlay({ map }: { map: GridMap }) {
  const env = useStore((s) => s.env);
  const episode = useStore((s) => s.episode);
  const envId = useStore((s) => s.envId);
  const box = useRef<HTMLDivElement>(null);
  const ready = !!env && !!episode && envId === 'grid/custom';
  // Once the episode shows, the keys go to it (the toggle that opened play no longer holds them).
  useEffect(() => {
    if (ready) box.current?.focus({ preventScroll: true });
  }, [ready]);
  useEffect(() => {
    useStore.getState().open({ envId: 'grid/custom', seed: 0, kwargs: mapToKwargs(map) });
    return () => useStore.getState().setPlaying(false);
  }, [map]);
  if (!ready) return <p className="muted">Starting…</p>;
  return (
    <div className="map-play" data-testid="map-play" ref={box} tabIndex={-1} role="group" aria-label="Playing the map: arrow keys move, Space toggles a door, P picks up, E is the expert's step">
      <div className="status-row">
        <EpisodeStatus spec={env.spec} episode={episode} />
        <ExpertControls />
        <button type="button" className="btn" {...keepFocus} onClick={() => useStore.getState().reset()}>
          Reset
        </button>
      </div>
      <GridView spec={env.spec} episode={episode} />
    </div>
  );
}
