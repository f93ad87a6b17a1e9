/**
 * The secret-looking values of an environment, without Effect, so the
 * small programs of the command can mask them as the whole command does.
 *
 * @internal
 */
import * as Utf8 from "../../Utf8.js"
import { checkKnownValue, MIN_KNOWN_VALUE_BYTES } from "./knownValues.js"

/** A value to mask wherever it appears, with the name it came from. */
export interface EnvValue {
  readonly name: string
  readonly value: string
}

/** An environment variable that was not registered as a known value, and why. */
export interface SkippedEnvValue {
  readonly name: string
  readonly bytes: number
  readonly reason: string
}

const secretName = /KEY|TOKEN|SECRET|PASSWORD/i

const scanEnv = (env: Record<string, string | undefined>) => {
  const values: Array<EnvValue> = []
  const skipped: Array<SkippedEnvValue> = []
  const seen = new Set<string>()
  for (const name of Object.keys(env).sort()) {
    const raw = env[name]
    if (raw === undefined || raw === "" || !secretName.test(name)) continue
    const lines = /[\r\n]/.test(raw) ? raw.split(/\r\n|\r|\n/).map((line) => line.trim()) : [raw]
    for (const value of lines) {
      if (value.trim() === "") continue
      const problem = checkKnownValue(value)
      if (problem === undefined) {
        if (!seen.has(value)) values.push({ name, value })
        seen.add(value)
      } else {
        skipped.push({
          name,
          bytes: Utf8.byteLength(value),
          reason: problem._tag === "TooShort" ? `shorter than ${MIN_KNOWN_VALUE_BYTES} bytes` : problem.reason
        })
      }
    }
  }
  return { values, skipped }
}

/** The values of variables named like KEY, TOKEN, SECRET or PASSWORD that a masker takes (see `Secrets.knownValuesFromEnv`). */
export const knownValuesFromEnv = (env: Record<string, string | undefined>): ReadonlyArray<EnvValue> => scanEnv(env).values

/** The secret-looking values left out, without the values (see `Secrets.skippedValuesFromEnv`). */
export const skippedValuesFromEnv = (env: Record<string, string | undefined>): ReadonlyArray<SkippedEnvValue> => scanEnv(env).skipped
