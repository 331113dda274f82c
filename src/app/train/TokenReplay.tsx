/**
 * Trajectory inspector for tool-env (token) episodes: the context as the model saw it, token by
 * token, each coloured by a chosen channel (probability, entropy, advantage, loss mask), with
 * environment tokens set apart, turn boundaries, per-turn reward, the policy version of every
 * token (hover), and the end marker. Scrubbed turn by turn like the grid replay: turns after the
 * current one are faded, not hidden, so the layout never jumps.
 *
 * The split and the colour scales are pure (tokens.ts); this file only draws. A context is at
 * most a few hundred tokens, so plain spans are cheap (no canvas, no virtualisation).
 */
import { useMemo, useState } from 'react';
import type { EpisodeView, TokenEpisodeView } from '../../runtime/trainWorker/types.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { batchAbsAdvantage, CHANNELS, channelRange, legendStops, toTranscript, tokenColor, type Channel, type ScaleRange } from './tokens.ts';
import { ReplayControls, Scrubber } from '../ui/Scrubber.tsx';
import { BranchTree } from './BranchTree.tsx';
import { usePlayback } from '../ui/usePlayback.ts';
import { EpisodeSummary, endWords, Tokens, TurnBlock, TurnFacts } from './TokenTurns.tsx';

function Legend({ channel, range }: { channel: Channel; range: ScaleRange }) {
  const stops = legendStops(channel, range);
  const help = CHANNELS.find((c) => c.id === channel)!.help;
  if (channel === 'mask') {
    return (
      <div className="tok-legend" data-testid="token-legend">
        <span className="tok tok-pol" style={{ background: tokenColor('mask', 1, range) }}>
          policy
        </span>{' '}
        loss mask 1 (trained on) ·{' '}
        <span className="tok tok-env" style={{ background: tokenColor('mask', 0, range) }}>
          env
        </span>{' '}
        loss mask 0 (context only)
        <p className="muted small">{help}</p>
      </div>
    );
  }
  const show = (v: number) => (channel === 'logprob' ? `${fmt(v)} (π ${fmt(Math.exp(v))})` : fmt(v));
  const gradient = `linear-gradient(to right, ${stops.map((s) => s.color).join(', ')})`;
  return (
    <div className="tok-legend" data-testid="token-legend">
      <span className="tok-scale-end">{show(channel === 'logprob' ? range.hi : range.lo)}</span>
      {/* log-prob reads best from sure (0, pale) to surprising (deep): draw it reversed. */}
      <span className="tok-scale" style={{ background: channel === 'logprob' ? `linear-gradient(to left, ${stops.map((s) => s.color).join(', ')})` : gradient }} />
      <span className="tok-scale-end">{show(channel === 'logprob' ? range.lo : range.hi)}</span>
      <span className="muted small">{channel === 'logprob' ? 'log π of the sampled token (this episode\'s range)' : channel === 'entropy' ? 'nats (this episode\'s range)' : 'advantage (± the batch\'s largest)'}</span>
      <p className="muted small">{help} Environment tokens stay uncoloured; hover any token for its numbers and policy version.</p>
    </div>
  );
}

function ChannelPicker({ channel, onChannel }: { channel: Channel; onChannel: (c: Channel) => void }) {
  return (
    <div className="tok-channels" role="radiogroup" aria-label="Colour tokens by">
      <span className="muted small">Colour by</span>
      {CHANNELS.map((c) => (
        <button
          key={c.id}
          type="button"
          role="radio"
          aria-checked={channel === c.id}
          className={`seg ${channel === c.id ? 'seg-on' : ''}`}
          data-testid={`channel-${c.id}`}
          title={c.help}
          onClick={() => onChannel(c.id)}
        >
          {c.label}
        </button>
      ))}
    </div>
  );
}

export function TokenReplay({ ep, index, batchEpisodes }: { ep: TokenEpisodeView; index: number; batchEpisodes: readonly EpisodeView[] }) {
  const transcript = useMemo(() => toTranscript(ep), [ep]);
  const T = transcript.turns.length;
  // The whole episode first: the transcript is read, then scrubbed.
  const { t, setT, playing, setPlaying } = usePlayback(T, T, 700);
  const [channel, setChannel] = useState<Channel>('logprob');
  const batchAbsAdv = useMemo(() => batchAbsAdvantage(batchEpisodes.map((e) => ({ advantage: e.advantage, turnAdvantages: e.kind === 'tokens' ? e.turnAdvantages : undefined }))), [batchEpisodes]);
  const range = useMemo(() => channelRange(channel, ep, batchAbsAdv), [channel, ep, batchAbsAdv]);
  const advRange = useMemo(() => channelRange('advantage', ep, batchAbsAdv), [ep, batchAbsAdv]);
  const end = endWords(ep);
  const turn = t >= 1 ? transcript.turns[t - 1] : null;

  return (
    <section className="panel inspector-main" data-testid="token-replay" data-turn={t} data-turns={T} data-channel={channel}>
      <header className="inspector-head">
        <EpisodeSummary ep={ep} index={index} transcript={transcript} end={end.end} />
        <ReplayControls t={t} max={T} playing={playing} setT={setT} setPlaying={setPlaying} prefix="turn" labels={{ first: 'Task only', prev: 'Previous turn', next: 'Next turn', last: 'Whole episode' }} />
      </header>

      <BranchTree episodes={batchEpisodes} index={index} />

      <Scrubber value={t} max={T} unit="turn" testId="turn-slider" onScrub={(v) => { setPlaying(false); setT(v); }} />

      <ChannelPicker channel={channel} onChannel={setChannel} />
      <Legend channel={channel} range={range} />

      <div className="tok-transcript" data-testid="token-transcript">
        <div className="tok-block tok-task">
          <div className="tok-block-head">Task (environment)</div>
          <div className="tok-line">
            <Tokens ep={ep} cells={transcript.task} channel={channel} range={range} faded={false} />
          </div>
        </div>
        {transcript.turns.map((x, k) => (
          <TurnBlock key={x.n} ep={ep} x={x} t={t} last={k === T - 1} channel={channel} range={range} advRange={advRange} end={end} onSelect={() => setT(x.n)} />
        ))}
      </div>

      <TurnFacts ep={ep} turn={turn} />
    </section>
  );
}
