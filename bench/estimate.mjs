// The benchmarks' estimator: a row is a set of alternating pairs (ours, the
// anchor's), each side first in half of them; its figure is the median of the
// pairs' own ratios, printed with a distribution-free confidence interval for
// that median (order statistics of the sorted ratios, ranks from the binomial
// distribution: no resampling, no assumption about the noise's shape). A row
// is met when the interval's upper end is at or under its target, not met
// when its lower end is over, and otherwise undecided; `estimate` adds pairs
// until it decides, up to a cap in pairs and in time.
/* global setTimeout, clearTimeout */

/** The confidence of every interval unless told: 95%. */
export const CONFIDENCE = 0.95

/** The median of a list of numbers (the mean of the middle two for an even count); NaN for none. */
export const medianOf = (xs) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** `P(B <= k)` for `B ~ Binomial(n, 1/2)`, for k from 0 to n, summed in log space so no term underflows. */
const binomialHalfCdf = (n) => {
  const out = new Array(n + 1)
  let logChoose = 0
  let sum = 0
  const logHalfN = n * Math.log(0.5)
  for (let k = 0; k <= n; k++) {
    sum += Math.exp(logChoose + logHalfN)
    out[k] = Math.min(1, sum)
    logChoose += Math.log(n - k) - Math.log(k + 1)
  }
  return out
}

/**
 * A confidence interval for the median of `xs`: the k-th smallest and the
 * k-th largest value, with k the largest rank whose binomial tail stays under
 * half of `1 - confidence`. `level` is the coverage those ranks guarantee for
 * any continuous distribution (at least `confidence`); with too few values
 * (fewer than 6 at 95%) no such ranks exist, and the interval is the whole
 * range with its smaller `level`.
 */
export const medianInterval = (xs, confidence = CONFIDENCE) => {
  const n = xs.length
  if (n === 0) return { n, median: NaN, lower: NaN, upper: NaN, level: 0, confidence }
  const s = [...xs].sort((a, b) => a - b)
  const cdf = binomialHalfCdf(n)
  const alpha = 1 - confidence
  // the lower rank k (1-based) covers the median unless at most k - 1 values fall under it
  let k = 0
  while (k + 1 <= n && cdf[k] <= alpha / 2) k++
  // with no such rank, the whole range, which covers the median unless every value falls on one side of it
  const rank = Math.max(1, k)
  const level = 1 - 2 * cdf[rank - 1]
  return { n, median: medianOf(s), lower: s[rank - 1], upper: s[n - rank], level, confidence }
}

/**
 * Whether an interval decides a target of "at most `target`": met when its
 * upper end is at or under it, not met when its lower end is over it,
 * undecided otherwise (or when the interval does not reach its confidence),
 * with an estimate of how many more pairs would decide: the interval narrows
 * as one over the square root of the pairs, measured in log space from the
 * median toward the target.
 */
export const verdict = (interval, target) => {
  if (target === undefined) return { state: "reference" }
  const { n, median, lower, upper, level, confidence } = interval
  if (level >= confidence - 1e-12) {
    if (upper <= target) return { state: "met" }
    if (lower > target) return { state: "not met" }
  }
  const d = Math.abs(Math.log(target) - Math.log(median))
  if (!(d > 0) || !Number.isFinite(d)) return { state: "undecided", morePairs: Infinity }
  const toward = median <= target ? upper : lower
  const h = Math.abs(Math.log(toward) - Math.log(median))
  // too few pairs for an interval: at least the pairs that make one
  const minimum = Math.max(0, minPairsFor(confidence) - n)
  const more = Number.isFinite(h) && h > 0 ? Math.ceil(n * (h / d) ** 2) - n : minimum
  return { state: "undecided", morePairs: Math.max(1, minimum, more) }
}

/** The fewest values whose order statistics give an interval at `confidence`. */
export const minPairsFor = (confidence = CONFIDENCE) => {
  let n = 1
  while (2 * 0.5 ** n > 1 - confidence) n++
  return n
}

/** The samples a row decides on: each pair's ratio, or our side alone (an absolute target, such as a time in ms). */
const samplesOf = (ours, theirs, decideBy) =>
  decideBy === "ours" ? [...ours] : ours.map((x, i) => x / theirs[i])

/**
 * The figures of a set of pairs: each side's median, the median of the pairs'
 * ratios with its interval, and the verdict on `decideBy` ("ratio", or
 * "ours" to hold our side's median to an absolute target) against `target`.
 */
export const judge = (ours, theirs, target, options = {}) => {
  const confidence = options.confidence ?? CONFIDENCE
  const decideBy = options.decideBy ?? "ratio"
  const ratio = medianInterval(samplesOf(ours, theirs, "ratio"), confidence)
  const own = medianInterval(ours, confidence)
  const decided = decideBy === "ours" ? own : ratio
  return {
    pairs: ours.length,
    ours: medianOf(ours),
    theirs: medianOf(theirs),
    ratio,
    own,
    decideBy,
    target,
    verdict: verdict(decided, target)
  }
}

/** `promise`, or a failure once `millis` have passed without it settling. */
const bounded = (promise, millis) => {
  if (!Number.isFinite(millis)) return promise
  let timer
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`a pair took longer than ${millis / 1000} s: the row is stopped`)), millis)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** How many times `estimate` looks at a row: at `minPairs`, then each time the pairs double, up to `maxPairs`. */
export const looksOf = (minPairs, maxPairs) => 1 + Math.max(0, Math.ceil(Math.log2(maxPairs / minPairs)))

/**
 * Runs pairs until the row decides. `pair(oursFirst, index)` measures one
 * pair and resolves to `{ ours, theirs }`; pairs alternate which side goes
 * first. After `warmup` pairs that are not counted, it takes `minPairs` and
 * looks; then it doubles the pairs and looks again, and stops at a decision,
 * at `maxPairs`, or once `maxMillis` have passed (a batch cut short by the
 * time ends on an even count, so each side still goes first in half). Each look's interval is at
 * `1 - (1 - confidence) / looks` (Bonferroni over the looks), so that
 * looking several times still calls a row wrong in at most `1 - confidence`
 * of runs. A row with no target (a reference) takes `minPairs` and stops.
 * A pair that takes longer than `pairTimeoutMillis` fails the row.
 */
export const estimate = async (options) => {
  const {
    pair,
    target,
    warmup = 1,
    minPairs = 12,
    maxPairs = 384,
    maxMillis = 120_000,
    pairTimeoutMillis = Number.POSITIVE_INFINITY,
    now = () => performance.now()
  } = options
  const first = Math.min(maxPairs, minPairs + (minPairs % 2))
  const perLook = 1 - (1 - (options.confidence ?? CONFIDENCE)) / looksOf(first, maxPairs)
  const ours = []
  const theirs = []
  const started = now()
  let index = 0
  const late = () => now() - started >= maxMillis
  const take = async (count, keep, capped = false) => {
    for (let i = 0; i < count; i++, index++) {
      if (capped && i % 2 === 0 && late()) return
      const r = await bounded(pair(index % 2 === 0, index), pairTimeoutMillis)
      if (!(r.ours >= 0 && r.theirs > 0)) throw new Error(`a pair measured ${r.ours} against ${r.theirs}: not a time`)
      if (keep) {
        ours.push(r.ours)
        theirs.push(r.theirs)
      }
    }
  }
  await take(warmup, false)
  // the counted pairs start with ours first, whatever the warm-up's count
  index = 0
  await take(first, true)
  const look = () => judge(ours, theirs, target, { ...options, confidence: perLook })
  let result = look()
  while (result.verdict.state === "undecided" && ours.length < maxPairs && !late()) {
    await take(Math.min(ours.length, maxPairs - ours.length), true, true)
    result = look()
  }
  return { ...result, samples: { ours, theirs }, millis: now() - started }
}

/** A number for a ratio: two decimals, or more below 0.1. */
const fixed = (x) => (!Number.isFinite(x) ? String(x) : x.toFixed(x < 0.1 ? 4 : 2))

/** `3.12x [2.95–3.30]`: a median with its interval. */
export const formatInterval = (interval, unit = "x") =>
  `${fixed(interval.median)}${unit} [${fixed(interval.lower)}–${fixed(interval.upper)}]`

/** A verdict in words: `met`, `not met`, `undecided: 40 more pairs`, `reference`. */
export const formatVerdict = (v) =>
  v.state !== "undecided"
    ? v.state
    : Number.isFinite(v.morePairs)
      ? `undecided: ${v.morePairs} more pairs`
      : "undecided: the median sits at the target"

/** A small seeded generator of uniform numbers in [0, 1) (mulberry32), for synthetic samples. */
export const seeded = (seed) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
