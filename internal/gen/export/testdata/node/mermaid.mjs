// Parses each Mermaid file named on the command line with Mermaid's own
// parser (mermaid.parse, on a jsdom window) and prints "<file>: ok
// <diagram type>" or "<file>: ERROR <message>"; exits 1 when any fails.
// Run by internal/gen/export's TestMermaidParses.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const { diagramType } = await mermaid.parse(readFileSync(file, 'utf8'));
    console.log(`${file}: ok ${diagramType}`);
  } catch (e) {
    failed++;
    console.log(`${file}: ERROR ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
