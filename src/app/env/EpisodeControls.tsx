/** Seed, reset and new seed; step back and the expert (one step, or autoplay at a readable rate). */
import { useEffect, useState, type MouseEvent } from 'react';
import { isOver } from '../state/episode.ts';
import { parseSeed } from '../state/hash.ts';
import { useStore } from '../store.ts';
import { PLAY_RATE } from '../state/sharedSlices.ts';

/** Buttons that should not keep keyboard focus after a click, so Space/Enter stay game keys. */
export const keepFocus = { onMouseDown: (e: MouseEvent) => e.preventDefault() };

function SeedInput() {
  const seed = useStore((s) => s.seed);
  const setSeed = useStore((s) => s.setSeed);
  const [text, setText] = useState(String(seed));
  const [error, setError] = useState<string | null>(null);
  /** Applies the typed seed; false (with a message) when it is not a valid seed. */
  const commit = (): boolean => {
    const r = parseSeed(text);
    if ('error' in r) {
      setError(r.error);
      return false;
    }
    setError(null);
    // Read the store, not the render's `seed`: Enter commits and then blur commits again.
    if (r.seed !== useStore.getState().seed) setSeed(r.seed);
    return true;
  };
  return (
    <label className="seed-field">
      <span>Seed</span>
      <input
        data-testid="seed-input"
        inputMode="numeric"
        value={text}
        aria-invalid={error !== null}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          // On success, hand the keyboard back to the game.
          if (e.key === 'Enter' && commit()) e.currentTarget.blur();
          if (e.key === 'Escape') {
            setText(String(seed));
            setError(null);
          }
        }}
      />
      {error && (
        <span className="field-error" role="alert">
          {error}
        </span>
      )}
    </label>
  );
}

export function SeedControls() {
  const seed = useStore((s) => s.seed);
  const { reset, newSeed } = useStore.getState();
  return (
    <div className="controls" role="toolbar" aria-label="Episode start">
      {/* Remount on seed change so the field shows seeds set elsewhere (new seed, a link). */}
      <SeedInput key={seed} />
      <button type="button" className="btn" data-testid="reset" onClick={reset} {...keepFocus} title="Start again with the same seed">
        Reset
      </button>
      <button type="button" className="btn" data-testid="new-seed" onClick={newSeed} {...keepFocus} title="Start again with a random seed">
        New seed
      </button>
    </div>
  );
}

export function ExpertControls() {
  const episode = useStore((s) => s.episode);
  const playing = useStore((s) => s.playing);
  const playRate = useStore((s) => s.playRate);
  const { stepBack, expertStep, setPlaying, setPlayRate } = useStore.getState();
  const over = !episode || isOver(episode);

  // Expert autoplay: one expert action per tick until the episode ends or the expert has none.
  useEffect(() => {
    if (!playing) return;
    const id = window.setInterval(() => {
      const ok = useStore.getState().expertStep();
      const ep = useStore.getState().episode;
      if (!ok || !ep || isOver(ep)) useStore.getState().setPlaying(false);
    }, 1000 / playRate);
    return () => window.clearInterval(id);
  }, [playing, playRate]);

  return (
    <div className="controls" role="toolbar" aria-label="Stepping">
      <button
        type="button"
        className="btn"
        data-testid="step-back"
        onClick={stepBack}
        disabled={!episode || episode.steps.length === 0}
        {...keepFocus}
        title="Undo the last step (replays the episode from its seed)"
      >
        ↶ Back
      </button>
      <button
        type="button"
        className="btn btn-expert"
        data-testid="expert-step"
        onClick={() => {
          setPlaying(false);
          expertStep();
        }}
        disabled={over}
        {...keepFocus}
        title="Let the expert take one action"
      >
        Step expert
      </button>
      <button
        type="button"
        className={`btn btn-expert ${playing ? 'btn-active' : ''}`}
        data-testid="expert-play"
        aria-pressed={playing}
        onClick={() => setPlaying(!playing)}
        disabled={over && !playing}
        {...keepFocus}
        title="Let the expert play on its own"
      >
        {playing ? '❚❚ Pause' : '▶ Play expert'}
      </button>
      <label className="rate" title="Expert speed, actions per second">
        <input
          type="range"
          min={PLAY_RATE.min}
          max={PLAY_RATE.max}
          step={0.5}
          value={playRate}
          onChange={(e) => setPlayRate(Number(e.target.value))}
          aria-label="Expert speed (actions per second)"
        />
        <span className="rate-value">{playRate}/s</span>
      </label>
    </div>
  );
}
