/** Playing the map by hand or watching the expert: the Environments view's viewer, on the map. */
import { useEffect } from 'react';
import { mapToKwargs, type GridMap } from '../../../core/envs/grid/mapSpec.ts';
import { ExpertControls } from '../../env/EpisodeControls.tsx';
import { EpisodeStatus } from '../../env/EpisodeStatus.tsx';
import { GridView } from '../../env/GridView.tsx';
import { useStore } from '../../state/store.ts';

export function MapPlay({ map }: { map: GridMap }) {
  const env = useStore((s) => s.env);
  const episode = useStore((s) => s.episode);
  const envId = useStore((s) => s.envId);
  useEffect(() => {
    useStore.getState().open({ envId: 'grid/custom', seed: 0, kwargs: mapToKwargs(map) });
    return () => useStore.getState().setPlaying(false);
  }, [map]);
  if (!env || !episode || envId !== 'grid/custom') return <p className="muted">Starting…</p>;
  return (
    <div className="map-play" data-testid="map-play">
      <div className="status-row">
        <EpisodeStatus spec={env.spec} episode={episode} />
        <ExpertControls />
        <button type="button" className="btn" onClick={() => useStore.getState().reset()}>
          Reset
        </button>
      </div>
      <GridView spec={env.spec} episode={episode} />
    </div>
  );
}
