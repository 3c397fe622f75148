import fc from "fast-check";

// vitest.config.mts resolves the seed once for the whole run and passes it here.
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(process.env.PROPERTY_SEED) });
