/** Where `resolveTrimPolicy` was; it lives in trim.ts now. Goes once /tmp/protect-imports.sh has moved its last importers to the index. */
export { resolveTrimPolicy } from "./trim";
