import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { fakeSummariser } from "./test/workers/support/fake-summariser";
import { fakeAiWorker } from "./test/workers/support/fake-ai";
import { propertySeed } from "./test/unit/support/property-seed";

const seed = propertySeed(process.env.PROPERTY_SEED);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          // Every fast-check property runs from one seed: fixed unless PROPERTY_SEED says otherwise.
          setupFiles: ["test/unit/support/fast-check-seed.ts"],
          env: { PROPERTY_SEED: String(seed) },
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                AUTH_SECRET: "workerd-test-secret",
                // Short enough for the tests that wait one out, long enough that a provider or tool answering at once
                // never misses it on a loaded machine (CI runs workerd and end-to-end tests side by side).
                PROVIDER_DEADLINE_MS: "1000",
                TOOL_DEADLINE_MS: "1000",
                SUMMARY_MODEL_URL: "https://summariser.test/v1/chat/completions",
                SUMMARY_MODEL: "fake-summariser",
                SUMMARY_MODEL_KEY: "summariser-test-key",
                // The model gateway's upstream: the gateway tests answer for this host in place of the network (test/workers/gateway-*.test.ts).
                UPSTREAM_URL: "https://upstream.test/v1",
                UPSTREAM_MODEL: "fake-upstream",
                UPSTREAM_KEY: "upstream-test-key",
                // A named upstream an agent may choose (`upstream: "second"`): the same fake host, its own model and key.
                UPSTREAM_SECOND_URL: "https://upstream.test/v1",
                UPSTREAM_SECOND_MODEL: "second-model",
                UPSTREAM_SECOND_KEY: "second-test-key",
                // The workerd property tests draw from the same seed as fast-check's (PROPERTY_SEED).
                PROPERTY_SEED: String(seed),
              },
              // The only outbound fetch in these tests: an OpenAI-compatible summariser that answers like a model would.
              outboundService: fakeSummariser,
              // Workers AI (optional in a deployment): a deterministic embedding model in place of @cf/baai/bge-m3, so
              // search_tools fuses its lexical ranking with a ranking by vectors (test/workers/support/fake-ai.ts).
              serviceBindings: { AI: { name: "fake-ai", entrypoint: "FakeAi" } },
              workers: [await fakeAiWorker()],
            },
          }),
        ],
        // A loaded machine (CI runs workerd and end-to-end tests side by side) can take a long workerd test past 5 s.
        test: { name: "workers", include: ["test/workers/**/*.test.ts"], testTimeout: 20_000 },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/e2e/global-setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
