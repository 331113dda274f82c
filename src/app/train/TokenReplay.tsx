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
import { memo, useEffect, useMemo, useState } from 'react';
import type { EpisodeView, TokenEpisodeView } from '../../runtime/trainWorker/types.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { batchAbsAdvantage, CHANNELS, channelRange, channelValue, legendStops, meanOver, toTranscript, tokenColor, tokenInk, type Channel, type ScaleRange, type TokenCell } from './tokens.ts';
import { ReplayControls, Scrubber } from '../ui/Scrubber.tsx';
import { SignedAdvantage } from './SignedAdvantage.tsx';
import { BranchTree } from './BranchTree.tsx';

function cellTitle(ep: TokenEpisodeView, c: TokenCell, adv: number): string {
  const name = c.special ? `<${c.text}>` : JSON.stringify(c.text);
  if (!c.policy) return `${name} · position ${c.pos} · environment token (loss mask 0: context, not trained on)`;
  const p = Math.exp(ep.logprobs[c.pos]);
  return `${name} · position ${c.pos} · sampled by policy v${ep.versions[c.pos]} · π ${fmt(p)} (log ${fmt(ep.logprobs[c.pos])}) · entropy ${fmt(ep.entropies[c.pos])} nats · advantage ${fmt(adv)}`;
}

/** One token: a special as a chip, '\n' as ↵ plus a line break, anything else as its text. */
const Tok = memo(function Tok({ ep, c, channel, range, faded, adv }: { ep: TokenEpisodeView; c: TokenCell; channel: Channel; range: ScaleRange; faded: boolean; adv: number }) {
  const cls = `tok ${c.policy ? 'tok-pol' : 'tok-env'} ${c.special ? 'tok-special' : ''} ${faded ? 'tok-faded' : ''}`;
  const v = channelValue(channel, ep, c.pos, adv);
  const style = c.policy || channel === 'mask' ? { background: tokenColor(channel, v, range), color: c.policy ? tokenInk(channel, v, range) : undefined } : undefined;
  const text = c.text === '\n' ? '↵' : c.text;
  return (
    <>
      <span className={cls} style={style} title={cellTitle(ep, c, adv)} data-pos={c.pos} data-v={c.policy ? ep.versions[c.pos] : undefined}>
        {text}
      </span>
      {c.text === '\n' && <br />}
    </>
  );
});

/** `adv`: the advantage the cells' action was trained with (its turn's). */
function Tokens({ ep, cells, channel, range, faded, adv = ep.advantage }: { ep: TokenEpisodeView; cells: readonly TokenCell[]; channel: Channel; range: ScaleRange; faded: boolean; adv?: number }) {
  return (
    <>
      {cells.map((c) => (
        <Tok key={c.pos} ep={ep} c={c} channel={channel} range={range} faded={faded} adv={adv} />
      ))}
    </>
  );
}

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

export function TokenReplay({ ep, index, batchEpisodes }: { ep: TokenEpisodeView; index: number; batchEpisodes: readonly EpisodeView[] }) {
  const transcript = useMemo(() => toTranscript(ep), [ep]);
  const T = transcript.turns.length;
  const [t, setT] = useState(T); // whole episode first: the transcript is read, then scrubbed
  const [playing, setPlaying] = useState(false);
  const [channel, setChannel] = useState<Channel>('logprob');
  const batchAbsAdv = useMemo(() => batchAbsAdvantage(batchEpisodes.map((e) => ({ advantage: e.advantage, turnAdvantages: e.kind === 'tokens' ? e.turnAdvantages : undefined }))), [batchEpisodes]);
  const perTurn = ep.turnAdvantages !== undefined && transcript.turns.some((x) => x.advantage !== ep.advantage);
  const range = useMemo(() => channelRange(channel, ep, batchAbsAdv), [channel, ep, batchAbsAdv]);
  const advRange = useMemo(() => channelRange('advantage', ep, batchAbsAdv), [ep, batchAbsAdv]);

  useEffect(() => {
    if (!playing) return;
    const id = setInterval(() => setT((x) => (x >= T ? x : x + 1)), 700);
    return () => clearInterval(id);
  }, [playing, T]);
  if (playing && t >= T) setPlaying(false);

  const why = ep.contextLimited ? `the ${ep.tokens.length}-token context filled up` : 'the turn limit was reached';
  const end = ep.success ? 'solved (terminated)' : ep.truncated ? `truncated: ${why}` : ep.terminated ? 'ended without success (terminated)' : 'did not end';
  const endChip = ep.success ? '✓ terminated: solved' : ep.truncated ? (ep.contextLimited ? 'truncated: context full' : 'truncated: turn limit') : ep.terminated ? '✕ terminated: not solved' : '… not ended';
  const turn = t >= 1 ? transcript.turns[t - 1] : null;
  const policyTokens = transcript.turns.reduce((n, x) => n + x.action.length, 0);
  const versions = transcript.turns.flatMap((x) => x.action.map((c) => ep.versions[c.pos]));
  const vLo = versions.length ? Math.min(...versions) : NaN;
  const vHi = versions.length ? Math.max(...versions) : NaN;

  return (
    <section className="panel inspector-main" data-testid="token-replay" data-turn={t} data-turns={T} data-channel={channel}>
      <header className="inspector-head">
        <div>
          <h3 className="inspector-title">
            Episode {index + 1}
            {ep.group >= 0 && <span className="muted"> · group {ep.group + 1}</span>} <span className="muted">· seed {ep.seed}</span>
          </h3>
          <p className="muted small">
            {T} turn{T === 1 ? '' : 's'}, {ep.tokens.length} context tokens ({policyTokens} sampled by the policy{versions.length ? `, version${vLo === vHi ? ` v${vLo}` : `s v${vLo}–v${vHi}`}` : ''}
            {ep.forcedEnds > 0 ? `; ${ep.forcedEnds} action${ep.forcedEnds > 1 ? 's' : ''} cut at the token limit` : ''}), {end}. Reward {fmt(ep.reward)}, advantage{' '}
            <SignedAdvantage value={ep.advantage} />
            {perTurn
              ? ': the outcome part; each turn was trained with its own advantage, shown beside it (colour by advantage for the heatmap).'
              : ep.advantage > 0
                ? ': every policy token in it was made more likely.'
                : ep.advantage < 0
                  ? ': every policy token in it was made less likely.'
                  : ': the update ignored it.'}
          </p>
        </div>
        <ReplayControls t={t} max={T} playing={playing} setT={setT} setPlaying={setPlaying} prefix="turn" labels={{ first: 'Task only', prev: 'Previous turn', next: 'Next turn', last: 'Whole episode' }} />
      </header>

      <BranchTree episodes={batchEpisodes} index={index} />

      <Scrubber value={t} max={T} unit="turn" testId="turn-slider" onScrub={(v) => { setPlaying(false); setT(v); }} />

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
            onClick={() => setChannel(c.id)}
          >
            {c.label}
          </button>
        ))}
      </div>
      <Legend channel={channel} range={range} />

      <div className="tok-transcript" data-testid="token-transcript">
        <div className="tok-block tok-task">
          <div className="tok-block-head">Task (environment)</div>
          <div className="tok-line">
            <Tokens ep={ep} cells={transcript.task} channel={channel} range={range} faded={false} />
          </div>
        </div>
        {transcript.turns.map((x, k) => {
          const faded = k + 1 > t;
          const last = k === T - 1;
          return (
            <div key={x.n} className={`tok-block ${k + 1 === t ? 'tok-current' : ''} ${faded ? 'tok-block-faded' : ''}`} data-testid={`turn-${x.n}`}>
              <div className="tok-block-head">
                <button type="button" className="link-btn" onClick={() => setT(x.n)}>
                  Turn {x.n}
                </button>
                <span className="muted">
                  {' '}
                  · reward{' '}
                  <b className={x.reward > 0 ? 'txt-good' : x.reward < 0 ? 'txt-bad' : ''} data-testid={`turn-reward-${x.n}`}>
                    {Number.isNaN(x.reward) ? 'none (not sent)' : fmt(x.reward)}
                  </b>
                  {Number.isFinite(x.advantage) && (
                    <>
                      {' '}
                      · advantage{' '}
                      <span className="tok-adv-swatch" style={{ background: tokenColor('advantage', x.advantage, advRange) }} aria-hidden />
                      <b className={x.advantage > 0 ? 'txt-good' : x.advantage < 0 ? 'txt-bad' : ''} data-testid={`turn-adv-${x.n}`}>
                        {x.advantage >= 0 ? '+' : ''}
                        {fmt(x.advantage)}
                      </b>
                    </>
                  )}
                </span>
              </div>
              <div className="tok-line tok-action" aria-label={`Turn ${x.n}: the policy's action${Number.isFinite(x.advantage) ? `, trained with advantage ${fmt(x.advantage)}` : ''}`}>
                <span className="tok-role">policy</span>
                <Tokens ep={ep} cells={x.action} channel={channel} range={range} faded={faded} adv={x.advantage} />
              </div>
              {x.reply.length > 0 && (
                <div className="tok-line tok-reply" aria-label={`Turn ${x.n}: the environment's reply`}>
                  <span className="tok-role">env</span>
                  <Tokens ep={ep} cells={x.reply} channel={channel} range={range} faded={faded} />
                </div>
              )}
              {last && (
                <span className={`strip-end ${ep.success ? 'strip-end-ok' : ep.truncated ? 'strip-end-trunc' : 'strip-end-fail'} ${faded ? 'tok-faded' : ''}`} data-testid="token-end" title={end}>
                  {endChip}
                </span>
              )}
            </div>
          );
        })}
      </div>

      <dl className="step-facts tok-facts" data-testid="turn-facts">
        {turn ? (
          <>
            <dt>Turn {turn.n} action</dt>
            <dd>
              <code>{turn.actionText || '(never reached the env)'}</code>
            </dd>
            <dt>Reward</dt>
            <dd>{Number.isNaN(turn.reward) ? '–' : fmt(turn.reward)}</dd>
            <dt>Advantage</dt>
            <dd data-testid="turn-facts-adv">{Number.isFinite(turn.advantage) ? fmt(turn.advantage) : '–'}</dd>
            <dt>Policy tokens</dt>
            <dd>{turn.action.length}</dd>
            <dt>Mean π(token)</dt>
            <dd>{fmt(Math.exp(meanOver(turn.action, ep.logprobs)))}</dd>
            <dt>Mean entropy</dt>
            <dd>{fmt(meanOver(turn.action, ep.entropies))} nats</dd>
            <dt>Policy version</dt>
            <dd>{turn.action.length ? `v${ep.versions[turn.action[0].pos]}` : '–'}</dd>
          </>
        ) : (
          <>
            <dt>Turn 0</dt>
            <dd>The task as the environment stated it; press ▶ to step through the turns.</dd>
          </>
        )}
      </dl>
    </section>
  );
}
