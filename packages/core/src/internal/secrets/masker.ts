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

/**
 * The engines of one set of rules and known values: the plain one, and
 * those that also report watched literals, by the literals. The maskers of
 * a program share them, whatever their known values: `spillway run` masks
 * a long output, the command line it records and what it prints through
 * two engines, where it built three when the environment held a
 * secret-looking value. (An engine's tables, the costly part, are built at
 * its first long input; see `makeAnchorScan`.)
 */
interface Family {
  plain: Engine | undefined
  readonly watching: Map<string, Engine>
}
/** Most sets of known values whose engines are kept for one set of rules (the newest); most watching engines kept for one set. */
const MAX_FAMILIES = 4
const MAX_WATCHING = 8
const families = new WeakMap<ReadonlyArray<SecretRule>, Map<string, Family>>()

const normalize = (value: string | KnownValue): KnownValue | { readonly name: undefined; readonly value: string } =>
  typeof value === "string" ? { name: undefined, value } : value

/** The engines of `rules` and `literals`, made empty the first time (in this process only: nothing of it is written anywhere). */
const familyOf = (rules: ReadonlyArray<SecretRule>, literals: ReadonlyArray<Literal>): Family => {
  let byLiterals = families.get(rules)
  if (byLiterals === undefined) {
    byLiterals = new Map()
    families.set(rules, byLiterals)
  }
  const key = literals.map((l) => `${l.at}${l.ignoreCase === true ? "i" : ""}:${l.text}`).join("\u0000")
  let family = byLiterals.get(key)
  if (family !== undefined) {
    // the newest used stays longest
    byLiterals.delete(key)
  } else {
    family = { plain: undefined, watching: new Map() }
    if (byLiterals.size >= MAX_FAMILIES) byLiterals.delete(byLiterals.keys().next().value!)
  }
  byLiterals.set(key, family)
  return family
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

  const family = familyOf(rules, literals)
  /** The engine of plain masking, made at its first use. */
  const engine = (): Engine => family.plain ??= makeEngine(rules, literals)

  const requested = options.maxHeldBytes
  const maxHeldBytes = requested === undefined || Number.isNaN(requested)
    ? DEFAULT_MAX_HELD_BYTES
    : Math.max(0, Math.floor(requested))

  const stream = (watch?: Watch, from?: StreamCheckpoint, options: StreamOptions = {}) => {
    const reuse = options.into ?? options.reuseOutput === true
    if (watch === undefined || watch.literals.length === 0) return makeStreamMasker(engine(), maxHeldBytes, undefined, from, reuse)
    const key = watch.literals.join("\u0000")
    let watchingEngine = family.watching.get(key)
    if (watchingEngine === undefined) {
      watchingEngine = makeEngine(rules, literals, watch.literals)
      // a few lists are ever watched (the failure rules'); the oldest gives way past a bound
      if (family.watching.size >= MAX_WATCHING) family.watching.delete(family.watching.keys().next().value!)
      family.watching.set(key, watchingEngine)
    }
    return makeStreamMasker(watchingEngine, maxHeldBytes, watch.onMark, from, reuse)
  }

  const maskBytes = (bytes: Uint8Array): Uint8Array => {
    if (bytes.length > WHOLE_TEXT_LIMIT) {
      const masker = makeStreamMasker(engine(), Math.max(maxHeldBytes, DEFAULT_MAX_HELD_BYTES))
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
    return applyFindings(bytes, engine().scan(bytes), 0, bytes.length)
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
