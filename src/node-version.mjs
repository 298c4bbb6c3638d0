// Plain JavaScript, so any Node can read it (an old one cannot even load a .ts file): imported
// first by src/roost.mjs (the `roost` command, `npm start`) and by src/cli.ts. Roost runs on
// Node 24, the one the `node` dependency installs into node_modules/.bin (npm scripts and npx run
// it); the system's Node only runs npm. Started with an older one, say so and stop.

export const REQUIRED_NODE_MAJOR = 24;

/** The message for a Node too old to run Roost, or null. */
export function nodeVersionProblem(version = process.versions.node) {
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
