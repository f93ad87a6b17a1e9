// The samples of secretlint's, detect-secrets' and TruffleHog's catalogues
// as test data (written by `node scripts/secret-catalogues.mjs <catalogue>
// <checkout>`), and how a masked sample is judged against them.
import { expect } from "@effect/vitest"
import type * as Secrets from "@spillway/core/Secrets"
import { Schema } from "effect"
import * as Fs from "node:fs"

const Span = Schema.Tuple(Schema.Number, Schema.Number)

/** A text the catalogue's rule reports, with the byte spans of the secrets in it. */
const TrueSample = Schema.Struct({ name: Schema.String, text: Schema.String, spans: Schema.Array(Span) })

/** A text the catalogue's rule does not report; `options` are the fixture's own rule options, when it has some. */
const FalseSample = Schema.Struct({ name: Schema.String, text: Schema.String, options: Schema.optional(Schema.String) })

const Rule = Schema.Struct({
  id: Schema.String,
  ruleId: Schema.optional(Schema.String),
  why: Schema.optional(Schema.String),
  tps: Schema.Array(TrueSample),
  fps: Schema.Array(FalseSample),
  unbuilt: Schema.Array(Schema.Struct({ what: Schema.String, reason: Schema.String }))
})

/** A catalogue file: where it came from, and its rules in the catalogue's order. */
export const Catalogue = Schema.Struct({
  source: Schema.String,
  commit: Schema.String,
  generatedBy: Schema.String,
  note: Schema.String,
  selection: Schema.optional(Schema.String),
  rules: Schema.Array(Rule)
})

export type Catalogue = typeof Catalogue.Type
export type CatalogueRule = typeof Rule.Type
export type TrueSample = typeof TrueSample.Type

/** Reads and decodes one catalogue's JSON. */
export const readCatalogue = (name: "secretlint" | "detect-secrets" | "trufflehog"): Catalogue =>
  Schema.decodeUnknownSync(Schema.parseJson(Catalogue))(Fs.readFileSync(new URL(`./${name}.json`, import.meta.url), "utf8"))

/** How one secret of a true sample came out: its text, and how many of its bytes (all but blanks and line breaks) stayed visible. */
export interface Judged {
  readonly name: string
  readonly secret: string
  readonly bytes: number
  readonly visible: number
}

const isBlank = (byte: number): boolean => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d

/** Masks a true sample and judges each of its spans; throws when the masked text changed length. */
export const judge = (masker: Secrets.Masker, sample: TrueSample): ReadonlyArray<Judged> => {
  const input = Buffer.from(sample.text, "utf8")
  const output = Buffer.from(masker.maskText(sample.text), "utf8")
  if (output.length !== input.length) throw new Error(`${sample.name}: masking changed the length`)
  return sample.spans.map(([start, end]) => {
    let bytes = 0
    let visible = 0
    for (let i = start; i < end; i++) {
      if (isBlank(input[i])) continue
      bytes++
      if (output[i] === input[i] && input[i] !== 0x2a) visible++
    }
    return { name: sample.name, secret: input.subarray(start, end).toString("utf8"), bytes, visible }
  })
}

/** The share of `part` in `whole`, as a percentage with one decimal. */
export const percent = (part: number, whole: number): string => `${((100 * part) / Math.max(1, whole)).toFixed(1)}%`

/** Samples listed by what their secret (or, for false samples, their text) looks like: how many there are, and why they are judged apart. */
export interface Listed {
  readonly match: RegExp
  readonly count: number
  readonly why: string
}

/** True samples masked all but a few bytes that are not the secret: at most how many stay visible. */
export interface ListedPartly extends Listed {
  readonly visible: number
}

/** The lists a catalogue's test judges its samples by, rule by rule. */
export interface Lists {
  /** True samples that are not real-looking secrets (placeholders, fakes): kept, or masked whole. */
  readonly placeholders: Readonly<Record<string, ReadonlyArray<Listed>>>
  /** Rules kept out on purpose, with all their true samples. */
  readonly keptOut: Readonly<Record<string, Omit<Listed, "match">>>
  /** Real-looking true samples masked all but the listed bytes (a URL's host, a key block's markers). */
  readonly partly: Readonly<Record<string, ReadonlyArray<ListedPartly>>>
  /** Real-looking true samples the masker misses, and why. */
  readonly missed: Readonly<Record<string, ReadonlyArray<Listed>>>
  /** False samples that hold a real-looking secret (another format, a length off by one, a character changed): masked on purpose. */
  readonly realSecrets: Readonly<Record<string, ReadonlyArray<Listed>>>
  /** False samples that are look-alikes, masked anyway. */
  readonly lookAlikesMasked: Readonly<Record<string, ReadonlyArray<Listed>>>
}

/** What one rule's samples came to, by list. */
export interface RuleOutcome {
  readonly problems: ReadonlyArray<string>
  readonly counts: Readonly<Record<keyof Lists | "masked" | "kept", number>>
}

/** The first entry whose pattern matches the sample's secret (or text), or its name. */
const first = (lists: ReadonlyArray<Listed> | undefined, text: string, name: string): number =>
  (lists ?? []).findIndex((l) => l.match.test(text) || l.match.test(name))

/**
 * Judges a rule's samples against the lists: every true sample must be
 * masked whole unless a list says otherwise, every false sample kept byte
 * for byte unless a list says it holds a real secret or is a look-alike
 * masked anyway; each listed entry must match exactly its count. Returns
 * what did not hold, and the counts the figures are made of.
 */
export const judgeRule = (masker: Secrets.Masker, rule: CatalogueRule, lists: Lists): RuleOutcome => {
  const problems: Array<string> = []
  const counts = { placeholders: 0, keptOut: 0, partly: 0, missed: 0, realSecrets: 0, lookAlikesMasked: 0, masked: 0, kept: 0 }
  const seen = new Map<Listed, number>()
  const hit = (entry: Listed) => seen.set(entry, (seen.get(entry) ?? 0) + 1)
  const keptOut = lists.keptOut[rule.id]
  for (const judged of rule.tps.flatMap((sample) => judge(masker, sample))) {
    const what = `${judged.name}: ${judged.secret.slice(0, 70)}`
    if (keptOut !== undefined) {
      counts.keptOut++
      continue
    }
    const placeholder = first(lists.placeholders[rule.id], judged.secret, judged.name)
    const partly = first(lists.partly[rule.id], judged.secret, judged.name)
    const missed = first(lists.missed[rule.id], judged.secret, judged.name)
    if (placeholder !== -1) {
      hit(lists.placeholders[rule.id]![placeholder]!)
      counts.placeholders++
      // a placeholder is kept, or masked whole: never cut
      if (judged.visible !== 0 && judged.visible !== judged.bytes) problems.push(`placeholder cut (${judged.visible} of ${judged.bytes} visible): ${what}`)
    } else if (partly !== -1) {
      const entry = lists.partly[rule.id]![partly]!
      hit(entry)
      counts.partly++
      if (judged.visible === 0 || judged.visible > entry.visible) problems.push(`listed as masked but ${entry.visible} bytes, ${judged.visible} visible: ${what}`)
    } else if (missed !== -1) {
      hit(lists.missed[rule.id]![missed]!)
      counts.missed++
      if (judged.visible === 0) problems.push(`listed as missed, now masked: ${what}`)
    } else if (judged.visible === 0) counts.masked++
    else problems.push(`not masked (${judged.visible} of ${judged.bytes} visible): ${what}`)
  }
  for (const sample of rule.fps) {
    const masked = masker.maskText(sample.text) !== sample.text
    const real = first(lists.realSecrets[rule.id], sample.text, sample.name)
    const lookAlike = first(lists.lookAlikesMasked[rule.id], sample.text, sample.name)
    if (real !== -1) {
      hit(lists.realSecrets[rule.id]![real]!)
      counts.realSecrets++
      if (!masked) problems.push(`listed as a real secret, but kept: ${sample.name}`)
    } else if (lookAlike !== -1) {
      hit(lists.lookAlikesMasked[rule.id]![lookAlike]!)
      counts.lookAlikesMasked++
      if (!masked) problems.push(`listed as a look-alike masked, now kept: ${sample.name}`)
    } else if (masked) problems.push(`look-alike masked: ${sample.name}: ${sample.text.trim().slice(0, 90)}`)
    else counts.kept++
  }
  for (const key of ["placeholders", "partly", "missed", "realSecrets", "lookAlikesMasked"] as const) {
    for (const entry of lists[key][rule.id] ?? []) {
      if ((seen.get(entry) ?? 0) !== entry.count) problems.push(`${key} ${entry.match}: ${seen.get(entry) ?? 0} samples, listed ${entry.count}`)
    }
  }
  if (keptOut !== undefined && counts.keptOut !== keptOut.count) problems.push(`kept out: ${counts.keptOut} samples, listed ${keptOut.count}`)
  return { problems, counts }
}

/** The sums of the counts over a catalogue's rules. */
export const totals = (outcomes: ReadonlyArray<RuleOutcome>): RuleOutcome["counts"] => {
  const sum = { placeholders: 0, keptOut: 0, partly: 0, missed: 0, realSecrets: 0, lookAlikesMasked: 0, masked: 0, kept: 0 }
  for (const { counts } of outcomes) for (const key of Object.keys(sum) as Array<keyof typeof sum>) sum[key] += counts[key]
  return sum
}

/**
 * Checks a catalogue's sums against the counts pinned for it (so a change
 * either way fails) and the shares docs/secrets.md gives: of the
 * real-looking secrets, at least 95% masked whole; of the look-alikes (false
 * samples that hold no real secret), at least 95% kept byte for byte.
 */
export const expectTotals = (
  outcomes: ReadonlyArray<RuleOutcome>,
  pinned: { readonly samples: number; readonly falseSamples: number; readonly counts: RuleOutcome["counts"] }
): void => {
  const sum = totals(outcomes)
  const samples = sum.masked + sum.partly + sum.missed + sum.placeholders + sum.keptOut
  const falseSamples = sum.kept + sum.realSecrets + sum.lookAlikesMasked
  expect({ samples, falseSamples }).toEqual({ samples: pinned.samples, falseSamples: pinned.falseSamples })
  expect(sum).toEqual(pinned.counts)
  const real = sum.masked + sum.partly + sum.missed
  expect(sum.masked / real, `masked ${percent(sum.masked, real)}`).toBeGreaterThanOrEqual(0.95)
  const lookAlikes = sum.kept + sum.lookAlikesMasked
  expect(sum.kept / lookAlikes, `kept ${percent(sum.kept, lookAlikes)}`).toBeGreaterThanOrEqual(0.95)
}
