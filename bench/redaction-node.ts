/**
 * `npx tsx bench/redaction-node.ts`: the redaction figures alone, in Node,
 * without starting a runtime: recall and false positives by shape over the
 * labelled corpus, and throughput on a 1 MiB mixed log.
 */
import { benchRedaction, formatRedactionBench } from "./redaction";

const r = benchRedaction();
console.log(`Redaction over the labelled corpus (${r.secrets} secrets, ${r.negatives} negative samples), Node ${process.version}`);
for (const line of formatRedactionBench(r)) console.log(line);
