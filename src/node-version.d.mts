// Types for node-version.mjs (plain JS so an old Node can run it and explain itself).

export const REQUIRED_NODE_MAJOR: number;

export function nodeVersionProblem(version?: string): string | null;
