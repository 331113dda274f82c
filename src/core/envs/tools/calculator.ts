/**
 * # tools/calculator
 *
 * ## Description
 * An arithmetic question whose operands are too large to guess, e.g. "what is 347 * 8062?"
 * or, with `terms: 2`, "what is 347 * 806 - 915 * 4062?". The agent has a calculator tool and
 * should learn to call it with the question's expression and copy the result into its answer.
 * What makes it hard for a tiny policy: copying a 3-4 digit operand exactly, then copying a
 * 6-8 digit result; guessing almost never scores.
 *
 * ## Observation
 * `{ text }`, at most 240 characters inside the shared vocabulary. At reset: the task, e.g.
 * `task: what is 347 * 8062? tools: calc(expression), answer(number).` After each turn: the
 * tool's reply (`result: 2797514`), an `error: ...` line, or the final verdict `done: ...`.
 *
 * ## Actions
 * One call per turn, at most 80 characters: `calc(expression)` evaluates whole numbers with
 * + - * ( ) and unary minus (and `/`, exact only, when `division` is on); `answer(number)`
 * submits a whole number and ends the episode. Anything else is malformed: an `error:` reply
 * that says what is wrong, the turn is spent, `info.malformed` is set.
 *
 * Action grammar (`actionGrammar()`, for constrained decoding): `calc(` an expression `)` where
 * the expression is a character class with structure: whole numbers of at most maxDigits digits
 * (2 x maxDigits with `division`, a shown dividend) joined by + - * (and /), at most 2 x terms
 * numbers: the calculator's syntax sized to the question, no parentheses or spaces (the tool
 * takes them; the grammar does not offer them). `answer(` one of the numbers shown so far `)`: an
 * operand of the question or a calc() result (an enum of what the transcript has shown; a right
 * answer is always a result the agent has seen or, never in practice, an operand).
 *
 * ## Reward
 * 1 for a correct answer, 0 otherwise (every other step is 0). `info.progress` is 1 on the
 * first calc() reply that shows the answer (the subgoal the `progress` shaping term rewards).
 *
 * ## Termination
 * Terminated by `answer(...)` (`info.success` = correct). Truncated after `maxTurns` turns.
 *
 * ## Kwargs
 * See `CalculatorConfig`.
 */
import type { Rng } from '../../util/rng.ts';
import type { EnvSpec } from '../types.ts';
import type { EnvKwargs } from '../registry.ts';
import { calculate } from './arith.ts';
import { DIGITS, call, chars, oneOf, rep, seq, type ActionGrammar } from '../../text/grammar.ts';
import {
  ACTION_MAX_LENGTH,
  LATENCY_RULES,
  ToolEnvBase,
  intIn,
  isBool,
  parseWholeNumber,
  readKwargs,
  toolActionSpace,
  toolGrammar,
  toolObservationSpace,
} from './base.ts';
import type { Outcome, ToolCall, ToolDef, ToolLatencyConfig, ToolTurnsConfig } from './base.ts';

export const CALCULATOR_ID = 'tools/calculator';

export interface CalculatorConfig extends ToolTurnsConfig, ToolLatencyConfig {
  /** Fewest digits in a generated operand. */
  minDigits: number;
  /** Most digits in a generated operand. */
  maxDigits: number;
  /**
   * Mixed difficulty: each question draws one operand length d uniformly from minDigits..maxDigits
   * and all its operands have d digits (1-digit questions are easy to copy, maxDigits ones hard),
   * instead of each operand drawn uniformly over the numbers (which makes nearly all maxDigits long).
   */
  mixedDigits: boolean;
  /** Terms in a question: 1 -> `a * b`, 2 -> `a * b + c * d` (signs + or -, drawn). */
  terms: number;
  /** Enable `/` in calc() (exact division only) and put exact quotients in questions. */
  division: boolean;
}

export const CALCULATOR_DEFAULTS: CalculatorConfig = {
  maxTurns: 4,
  minDigits: 3,
  maxDigits: 4,
  mixedDigits: false,
  terms: 1,
  division: false,
  latencyMedianMs: 5,
  latencySigma: 0.5,
};

const TOOLS: readonly ToolDef[] = [
  { name: 'calc', signature: 'calc(expression)' },
  { name: 'answer', signature: 'answer(number)' },
];

export class CalculatorEnv extends ToolEnvBase {
  readonly spec: EnvSpec;
  protected readonly tools = TOOLS;
  readonly config: CalculatorConfig;

  /** The question's expression as the expert types it, e.g. `347*8062`. */
  private expression = '';
  private answer = 0;
  /** Has a calc() reply already shown the answer? (then the expert answers) */
  private answerShown = false;

  constructor(config: Partial<CalculatorConfig> = {}) {
    super();
    this.config = { ...CALCULATOR_DEFAULTS, ...config };
    const c = this.config;
    if (c.minDigits > c.maxDigits) throw new Error(`${CALCULATOR_ID}: minDigits ${c.minDigits} > maxDigits ${c.maxDigits}`);
    // The expert's call must fit the action space: a term is sign + a + op + b, and a shown
    // dividend has the digits of two operands.
    const termChars = (c.division ? 3 : 2) * c.maxDigits + 2;
    const longest = 'calc()'.length + c.terms * termChars - 1;
    if (longest > ACTION_MAX_LENGTH) {
      throw new Error(`${CALCULATOR_ID}: terms ${c.terms} x maxDigits ${c.maxDigits} makes calls up to ${longest} characters; the action limit is ${ACTION_MAX_LENGTH}`);
    }
    this.spec = {
      id: CALCULATOR_ID,
      title: 'Calculator',
      description:
        'Answer an arithmetic question with operands too large to guess. The agent can call ' +
        'calc(expression) and must then answer(number) with the exact result: it has to learn to ' +
        'copy the expression into the tool and the tool result into the answer.',
      family: 'tool',
      observationSpace: toolObservationSpace(),
      actionSpace: toolActionSpace(),
      rewardRange: [0, 1],
      maxSteps: c.maxTurns,
    };
  }

  protected newEpisode(rng: Rng): string {
    const c = this.config;
    // Drawn only with mixedDigits, so the default questions of every seed are unchanged.
    const d = c.mixedDigits ? rng.int(c.minDigits, c.maxDigits + 1) : 0;
    const operand = () => (c.mixedDigits ? rng.int(10 ** (d - 1), 10 ** d) : rng.int(10 ** (c.minDigits - 1), 10 ** c.maxDigits));
    const shown: string[] = [];
    const typed: string[] = [];
    for (let k = 0; k < c.terms; k++) {
      const sign = k === 0 ? '' : rng.bernoulli(0.5) ? '+' : '-';
      let a: number;
      let b: number;
      let op: '*' | '/';
      if (c.division && rng.bernoulli(0.5)) {
        // An exact quotient: show (q * d) / d so the agent cannot read q off the question.
        b = operand();
        a = operand() * b;
        op = '/';
      } else {
        a = operand();
        b = operand();
        op = '*';
      }
      shown.push(`${sign ? `${sign} ` : ''}${a} ${op} ${b}`);
      typed.push(`${sign}${a}${op}${b}`);
    }
    this.expression = typed.join('');
    const r = calculate(this.expression, { division: c.division });
    if (!r.ok) throw new Error(`${CALCULATOR_ID}: generated question ${this.expression} does not evaluate: ${r.error}`);
    this.answer = r.value;
    this.answerShown = false;
    const tools = TOOLS.map((t) => t.signature).join(', ');
    return `task: what is ${shown.join(' ')}? tools: ${tools}.`;
  }

  protected handle(call: ToolCall): Outcome {
    if (call.tool === 'answer') {
      const n = parseWholeNumber(call.args);
      if (n === null) return { kind: 'malformed', error: `answer takes a whole number, e.g. answer(42); got ${JSON.stringify(call.args.trim().slice(0, 20))}` };
      const success = n === this.answer;
      return {
        kind: 'final',
        success,
        reward: success ? 1 : 0,
        text: success ? `done: correct, ${this.answer}.` : `done: wrong, the answer is ${this.answer}.`,
      };
    }
    // calc
    const r = calculate(call.args, { division: this.config.division });
    if (!r.ok && 'syntax' in r) return { kind: 'malformed', error: `calc: ${r.error}` };
    const latencyMs = this.drawLatency(this.config.latencyMedianMs, this.config.latencySigma);
    if (!r.ok) return { kind: 'tool', failed: true, latencyMs, text: `error: ${r.error}` };
    // Progress: the first reply that shows the answer (the expression was copied right).
    const progress = r.value === this.answer && !this.answerShown ? 1 : 0;
    if (r.value === this.answer) this.answerShown = true;
    return { kind: 'tool', failed: false, latencyMs, text: `result: ${r.value}`, progress };
  }

  /** The actions constrained decoding may sample now (see the header's Actions). */
  actionGrammar(): ActionGrammar {
    const c = this.config;
    const num = chars(DIGITS, 1, (c.division ? 2 : 1) * c.maxDigits);
    const expression = seq(num, rep(seq(chars(c.division ? '+-*/' : '+-*', 1, 1), num), 0, 2 * c.terms - 1));
    const shown = this.shownTexts().flatMap((t) => t.match(/-?\d+/g) ?? []);
    return toolGrammar([call('calc', expression), call('answer', oneOf(shown))]);
  }

  protected expert(): string {
    return this.answerShown ? `answer(${this.answer})` : `calc(${this.expression})`;
  }

  protected timeoutNote(): string {
    return `the answer was ${this.answer}.`;
  }
}

export function makeCalculator(kwargs: EnvKwargs = {}): CalculatorEnv {
  return new CalculatorEnv(
    readKwargs(CALCULATOR_ID, kwargs, CALCULATOR_DEFAULTS, {
      maxTurns: intIn(1, 100),
      minDigits: intIn(1, 6),
      maxDigits: intIn(1, 6),
      mixedDigits: isBool,
      terms: intIn(1, 4),
      division: isBool,
      ...LATENCY_RULES,
    }),
  );
}
