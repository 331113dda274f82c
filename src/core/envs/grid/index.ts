// Registers the grid worlds; filled in by the grid-world work.
export {};
