import type { Env as RuntimeEnv } from "../../src/platform/env";

/** Types `env` from "cloudflare:workers" in the workerd tests as the runtime's bindings. */
declare global {
  namespace Cloudflare {
    interface Env extends RuntimeEnv {}
  }
}
