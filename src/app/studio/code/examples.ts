/** The code envs shipped in examples/envs/, offered in the Code tab. */
import emptyRoom from '../../../../examples/envs/empty-room.js?raw';
import guessNumber from '../../../../examples/envs/guess-number.js?raw';
import cartpole from '../../../../examples/envs/cartpole.js?raw';

export const CODE_ENV_EXAMPLES: readonly { id: string; title: string; code: string }[] = [
  { id: 'empty-room', title: 'Empty room 8×8 (grid, the port of grid/empty-8x8)', code: emptyRoom },
  { id: 'guess-number', title: 'Guess the number (text, a tool-like call)', code: guessNumber },
  { id: 'cartpole', title: 'CartPole (vector observation, Gymnasium CartPole-v1)', code: cartpole },
];
