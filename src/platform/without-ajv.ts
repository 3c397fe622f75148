/**
 * Stands in for `ajv` and `ajv-formats` in the Worker's bundle (wrangler.toml, `[alias]`). The MCP SDK imports ajv for
 * its default JSON Schema validator, which compiles schemas with `new Function`, and Workers forbid that. The runtime
 * gives every SDK server and client @cfworker/json-schema's validator instead (`jsonSchemaValidator`), so ajv is
 * never constructed; aliasing it away keeps about 290 KB of code out of every Worker.
 */
export default function ajvIsNotBundled(): never {
  throw new Error("ajv is not bundled in this Worker: give the MCP SDK a jsonSchemaValidator (CfWorkerJsonSchemaValidator)");
}
