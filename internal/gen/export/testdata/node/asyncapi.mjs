// Parses each AsyncAPI document named on the command line with the
// official @asyncapi/parser (Avro payloads through @asyncapi/avro-schema-parser)
// and prints every diagnostic; exits 1 when any is an error. Run by
// internal/gen/export's TestAsyncAPIParser.
import { readFileSync } from 'node:fs';
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import avro from '@asyncapi/avro-schema-parser';

const parser = new Parser();
parser.registerSchemaParser((avro.AvroSchemaParser || avro.default?.AvroSchemaParser || avro.default)());

let failed = false;
for (const file of process.argv.slice(2)) {
  const { document, diagnostics } = await parser.parse(readFileSync(file, 'utf8'), { source: file });
  const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
  for (const d of diagnostics) {
    const sev = ['error', 'warning', 'info', 'hint'][d.severity] ?? d.severity;
    console.log(`${file}: ${sev}: ${d.code}: ${d.message} at ${JSON.stringify(d.path)}`);
  }
  if (!document || errors.length > 0) {
    failed = true;
    console.log(`${file}: FAILED (${errors.length} errors)`);
  } else {
    console.log(`${file}: ok: ${document.channels().length} channels, ${document.operations().length} operations, ${document.messages().length} messages`);
  }
}
process.exit(failed ? 1 : 0);
