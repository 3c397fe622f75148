/** Starts the local runtime once for all end-to-end tests and hands them its URL and secret. */
import type { TestProject } from "vitest/node";
import { startLocalRuntime } from "../../scripts/local-runtime";

declare module "vitest" {
  export interface ProvidedContext {
    runtimeUrl: string;
    authSecret: string;
  }
}

export default async function setup(project: TestProject) {
  const secret = `e2e-${crypto.randomUUID()}`;
  const runtime = await startLocalRuntime(secret);
  project.provide("runtimeUrl", runtime.url);
  project.provide("authSecret", secret);
  return runtime.stop;
}
