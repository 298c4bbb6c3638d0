#!/usr/bin/env node
// The `roost` command (package.json "bin", `npm start`): checks the Node version in plain
// JavaScript first, then loads the TypeScript CLI (src/cli.ts).
import './node-version.mjs';

await import('./cli.ts');
