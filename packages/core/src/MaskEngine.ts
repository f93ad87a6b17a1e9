/**
 * The masking engine on its own: the rules, known values and stream masker
 * that `Secrets` is built from, without Effect, so that a worker thread
 * masking a stream loads nothing else.
 *
 * @since 0.1.0
 */
export { buildMasker, type Built, DEFAULT_MAX_HELD_BYTES, type Refusal } from "./internal/secrets/masker.js"
export { knownValuesFromEnv, skippedValuesFromEnv } from "./internal/secrets/env.js"
