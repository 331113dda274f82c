// Registers the tool envs; filled in by the tool-env work.
export {};
