/**
 * The token replay's pieces: one token (coloured by the chosen channel), a turn's block (its
 * action and the env's reply, reward and advantage), the episode's summary line and the facts
 * of the current turn.
 */
import { memo } from 'react';
import type { TokenEpisodeView } from '../../runtime/trainWorker/types.ts';
import { fmt } from '../ui/MetricChart.tsx';
import { channelValue, meanOver, tokenColor, tokenInk, type Channel, type ScaleRange, type TokenCell, type Transcript, type Turn } from './tokens.ts';
import { SignedAdvantage } from './SignedAdvantage.tsx';
import { EpisodeHeading } from './EpisodeHeading.tsx';

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
export function Tokens({ ep, cells, channel, range, faded, adv = ep.advantage }: { ep: TokenEpisodeView; cells: readonly TokenCell[]; channel: Channel; range: ScaleRange; faded: boolean; adv?: number }) {
  return (
    <>
      {cells.map((c) => (
        <Tok key={c.pos} ep={ep} c={c} channel={channel} range={range} faded={faded} adv={adv} />
      ))}
    </>
  );
}

/** How the episode ended: the long form (the summary, the end marker's title) and the marker's chip. */
export function endWords(ep: TokenEpisodeView): { end: string; chip: string } {
  const why = ep.contextLimited ? `the ${ep.tokens.length}-token context filled up` : 'the turn limit was reached';
  const end = ep.success ? 'solved (terminated)' : ep.truncated ? `truncated: ${why}` : ep.terminated ? 'ended without success (terminated)' : 'did not end';
  const chip = ep.success ? '✓ terminated: solved' : ep.truncated ? (ep.contextLimited ? 'truncated: context full' : 'truncated: turn limit') : ep.terminated ? '✕ terminated: not solved' : '… not ended';
  return { end, chip };
}

/** The episode's title and one-paragraph summary: turns, tokens, policy versions, end, reward, advantage. */
export function EpisodeSummary({ ep, index, transcript, end }: { ep: TokenEpisodeView; index: number; transcript: Transcript; end: string }) {
  const T = transcript.turns.length;
  const perTurn = ep.turnAdvantages !== undefined && transcript.turns.some((x) => x.advantage !== ep.advantage);
  const policyTokens = transcript.turns.reduce((n, x) => n + x.action.length, 0);
  const versions = transcript.turns.flatMap((x) => x.action.map((c) => ep.versions[c.pos]));
  const vLo = versions.length ? Math.min(...versions) : NaN;
  const vHi = versions.length ? Math.max(...versions) : NaN;
  return (
    <div>
      <EpisodeHeading index={index} group={ep.group} seed={ep.seed} />
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
  );
}

function TurnHead({ x, advRange, onSelect }: { x: Turn; advRange: ScaleRange; onSelect: () => void }) {
  return (
    <div className="tok-block-head">
      <button type="button" className="link-btn" onClick={onSelect}>
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
  );
}

export interface TurnBlockProps {
  ep: TokenEpisodeView;
  x: Turn;
  /** Where the scrubber is: 1-based turn (0: the task only). */
  t: number;
  /** The episode's last turn carries the end marker. */
  last: boolean;
  channel: Channel;
  range: ScaleRange;
  advRange: ScaleRange;
  end: { end: string; chip: string };
  onSelect: () => void;
}

export function TurnBlock({ ep, x, t, last, channel, range, advRange, end, onSelect }: TurnBlockProps) {
  const faded = x.n > t;
  return (
    <div className={`tok-block ${x.n === t ? 'tok-current' : ''} ${faded ? 'tok-block-faded' : ''}`} data-testid={`turn-${x.n}`}>
      <TurnHead x={x} advRange={advRange} onSelect={onSelect} />
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
        <span className={`strip-end ${ep.success ? 'strip-end-ok' : ep.truncated ? 'strip-end-trunc' : 'strip-end-fail'} ${faded ? 'tok-faded' : ''}`} data-testid="token-end" title={end.end}>
          {end.chip}
        </span>
      )}
    </div>
  );
}

export function TurnFacts({ ep, turn }: { ep: TokenEpisodeView; turn: Turn | null }) {
  return (
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
  );
}
