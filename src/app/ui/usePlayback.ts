/**
 * A replay's position and its play loop: while playing, the position moves one step every
 * `everyMs` until it reaches `max`, where playing stops.
 */
import { useEffect, useState } from 'react';

export function usePlayback(max: number, start: number, everyMs: number) {
  const [t, setT] = useState(start);
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    if (!playing) return;
    const id = setInterval(() => setT((x) => (x >= max ? x : x + 1)), everyMs);
    return () => clearInterval(id);
  }, [playing, max, everyMs]);
  if (playing && t >= max) setPlaying(false);
  return { t, setT, playing, setPlaying };
}
