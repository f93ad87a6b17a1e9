import type { KnownValue, Masker, MaskerOptions, SecretRule, StreamCheckpoint, StreamOptions, Watch } from "../../Secrets.js"
import { applyFindings, type Engine, type Literal, makeEngine } from "./engine.js"
import { checkKnownValue, type KnownValueProblem, knownValueForms } from "./knownValues.js"
import { defaultRules } from "./rules.js"
import { makeStreamMasker } from "./stream.js"

/** Default cap on the bytes a stream holds back while waiting for the end of a line. */
export const DEFAULT_MAX_HELD_BYTES = 65536

// Inputs above this are masked through a stream fed in windows, since one
// string this large would come near V8's string length limit.
const WHOLE_TEXT_LIMIT = 128 * 1024 * 1024
const WINDOW_BYTES = 16 * 1024 * 1024

/** A refused known value, with the name it was registered under if any. */
export interface Refusal {
  readonly name: string | undefined
  readonly problem: KnownValueProblem
}

/** The outcome of building a masker. */
export type Built =
  | { readonly _tag: "Built"; readonly masker: Masker }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const engines = new WeakMap<ReadonlyArray<SecretRule>, Engine>()
/** Most engines with watched literals kept for one set of rules. */
const MAX_WATCHING = 8
/** Engines that also report watched literals, for maskers without known values: by rules, then by the literals. */
const watchingEngines = new WeakMap<ReadonlyArray<SecretRule>, Map<string, Engine>>()

const normalize = (value: string | KnownValue): KnownValue | { readonly name: undefined; readonly value: string } =>
  typeof value === "string" ? { name: undefined, value } : value

const sharedWatching = (rules: ReadonlyArray<SecretRule>): Map<string, Engine> => {
  let map = watchingEngines.get(rules)
  if (map === undefined) {
    map = new Map()
    watchingEngines.set(rules, map)
  }
  return map
}

/** Builds a masker, or says which known value was refused and why. */
export const buildMasker = (options: MaskerOptions = {}): Built => {
  const rules = options.rules ?? defaultRules
  const literals: Array<Literal> = []
  for (const entry of options.knownValues ?? []) {
    const { name, value } = normalize(entry)
    const problem = checkKnownValue(value)
    if (problem !== undefined) return { _tag: "Refused", refusal: { name, problem } }
    literals.push(...knownValueForms(value))
  }

  let engine: Engine
  if (literals.length === 0) {
    engine = engines.get(rules) ?? makeEngine(rules, [])
    engines.set(rules, engine)
  } else {
    engine = makeEngine(rules, literals)
  }

  const requested = options.maxHeldBytes
  const maxHeldBytes = requested === undefined || Number.isNaN(requested)
    ? DEFAULT_MAX_HELD_BYTES
    : Math.max(0, Math.floor(requested))

  // Engines that also report watched literals, one per list of literals: shared by every masker of
  // the same rules when there are no known values (building one costs more than masking megabytes)
  const watching = literals.length === 0 ? sharedWatching(rules) : new Map<string, Engine>()
  const stream = (watch?: Watch, from?: StreamCheckpoint, options: StreamOptions = {}) => {
    const reuse = options.into ?? options.reuseOutput === true
    if (watch === undefined || watch.literals.length === 0) return makeStreamMasker(engine, maxHeldBytes, undefined, from, reuse)
    const key = watch.literals.join("\u0000")
    let watchingEngine = watching.get(key)
    if (watchingEngine === undefined) {
      watchingEngine = makeEngine(rules, literals, watch.literals)
      // a few lists are ever watched (the failure rules'); the oldest gives way past a bound
      if (watching.size >= MAX_WATCHING) watching.delete(watching.keys().next().value!)
      watching.set(key, watchingEngine)
    }
    return makeStreamMasker(watchingEngine, maxHeldBytes, watch.onMark, from, reuse)
  }

  const maskBytes = (bytes: Uint8Array): Uint8Array => {
    if (bytes.length > WHOLE_TEXT_LIMIT) {
      const masker = makeStreamMasker(engine, Math.max(maxHeldBytes, DEFAULT_MAX_HELD_BYTES))
      const out = new Uint8Array(bytes.length)
      let offset = 0
      for (let i = 0; i < bytes.length; i += WINDOW_BYTES) {
        const part = masker.push(bytes.subarray(i, Math.min(bytes.length, i + WINDOW_BYTES)))
        out.set(part, offset)
        offset += part.length
      }
      out.set(masker.end(), offset)
      return out
    }
    return applyFindings(bytes, engine.scan(bytes), 0, bytes.length)
  }

  const maskText = (text: string): string => decoder.decode(maskBytes(encoder.encode(text)))

  return {
    _tag: "Built",
    masker: {
      maskBytes,
      maskText,
      stream: (watch, options) => stream(watch, undefined, options),
      resume: (checkpoint, watch, options) => stream(watch, checkpoint, options)
    }
  }
}
