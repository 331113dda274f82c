/** Every lesson, in the order the Lessons view lists them; validated once at load. */
import sparseVsShaped from './data/sparse-vs-shaped.ts';
import explorationCollapse from './data/exploration-collapse.ts';
import signalDegeneration from './data/signal-degeneration.ts';
import shiftStaleness from './data/shift-staleness.ts';
import rlvrVsAgentic from './data/rlvr-vs-agentic.ts';
import grpoVsPpo from './data/grpo-vs-ppo.ts';
import warmStartThenRl from './data/warm-start-then-rl.ts';
import rewardHacking from './data/reward-hacking.ts';
import designTheRoom from './data/design-the-room.ts';
import sharpeningOrDiscovery from './data/sharpening-or-discovery.ts';
import rlLearnsWhatImitationCannot from './data/rl-learns-what-imitation-cannot.ts';
import overTheWire from './data/over-the-wire.ts';
import { loadLessons } from './schema.ts';

export const LESSON_FILES: readonly unknown[] = [sparseVsShaped, explorationCollapse, signalDegeneration, shiftStaleness, rlvrVsAgentic, grpoVsPpo, rewardHacking, warmStartThenRl, designTheRoom, sharpeningOrDiscovery, rlLearnsWhatImitationCannot, overTheWire];

export const LESSONS = loadLessons(LESSON_FILES);
