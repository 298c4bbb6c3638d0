/**
 * Imported first by src/cli.ts, before anything else loads: Roost runs on Node 24, the one the
 * `node` dependency installs into node_modules/.bin (npm scripts and npx run it). The system's
 * Node only runs npm; started by hand with an older one, say so instead of failing somewhere deep.
 */
export const REQUIRED_NODE_MAJOR = 24;

export function nodeVersionProblem(version: string = process.versions.node): string | null {
  const major = Number(version.split('.')[0]);
  if (major >= REQUIRED_NODE_MAJOR) return null;
  return (
    `roost: Node.js ${REQUIRED_NODE_MAJOR} or newer runs Roost; this is Node.js ${version}. ` +
    'npm installs Node 24 into node_modules/.bin: start Roost with `npm start` or `npx roost …`, ' +
    'which use it, rather than calling `node` directly.'
  );
}

const problem = nodeVersionProblem();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
