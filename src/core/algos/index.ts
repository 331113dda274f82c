/** The RL math of the training loop: advantages, reference losses, sampling, off-policy, metrics, config. */
export * from './advantages.ts';
export * from './config.ts';
export * from './losses.ts';
export * from './metrics.ts';
export * from './offpolicy.ts';
export * from './sampling.ts';
export * from './stats.ts';
