/**
 * The benchmarks' estimator on synthetic pairs with a known true ratio: it
 * decides a row 10% from its target, its intervals cover the truth as often
 * as they claim, it seldom calls a row that sits on its target, and it stops
 * at its caps.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  estimate,
  type Estimate,
  formatInterval,
  formatVerdict,
  judge,
  looksOf,
  medianInterval,
  medianOf,
  minPairsFor,
  seeded,
  verdict
} from "../bench/estimate.mjs"

/** A standard normal number from two uniform ones (Box-Muller). */
const gaussian = (random: () => number) => {
  let u = 0
  while (u === 0) u = random()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
}

/**
 * One row on synthetic times: each side's time is its true time times
 * (1 + noise · N(0, 1)), ours `truth` times the anchor's, and the clock
 * advances one tick a pair so the time cap never applies unless told.
 */
const synthetic = (truth: number, target: number | undefined, seed: number, extra: Partial<Parameters<typeof estimate>[0]> = {}) => {
  const random = seeded(seed)
  const side = () => Math.max(0.05, 1 + 0.2 * gaussian(random))
  let tick = 0
  return estimate({
    target,
    pair: async () => ({ ours: 100 * truth * side(), theirs: 100 * side() }),
    now: () => tick++,
    maxMillis: Number.POSITIVE_INFINITY,
    ...extra
  })
}

/** The verdicts of `trials` seeded rows, counted by state, with how often the final interval held the truth. */
const trials = async (truth: number, target: number, count: number) => {
  const states: Record<string, number> = {}
  let covered = 0
  const runs: Array<Estimate> = []
  for (let seed = 1; seed <= count; seed++) {
    const r = await synthetic(truth, target, seed)
    states[r.verdict.state] = (states[r.verdict.state] ?? 0) + 1
    if (r.ratio.lower <= truth && truth <= r.ratio.upper) covered++
    runs.push(r)
  }
  return { states, covered: covered / count, runs }
}

describe("the median's interval from order statistics", () => {
  it("takes the ranks of the binomial table", () => {
    const xs = Array.from({ length: 30 }, (_, i) => 30 - i)
    // n = 30 at 95%: the 10th smallest and the 10th largest
    const i = medianInterval(xs, 0.95)
    expect([i.lower, i.upper, i.median]).toEqual([10, 21, 15.5])
    expect(i.level).toBeGreaterThanOrEqual(0.95)
    expect(i.level).toBeCloseTo(0.9572, 4)
    // six values are the fewest whose whole range reaches 95%; five fall short and say so
    expect(minPairsFor(0.95)).toBe(6)
    expect(medianInterval([1, 2, 3, 4, 5, 6]).level).toBeCloseTo(0.96875, 5)
    expect(medianInterval([1, 2, 3, 4, 5]).level).toBeLessThan(0.95)
    expect(verdict(medianInterval([1, 1, 1, 1, 1]), 2).state).toBe("undecided")
  })

  it("covers the true median in at least 90% of 200 seeded sets of 30 pairs", () => {
    let covered = 0
    for (let seed = 1; seed <= 200; seed++) {
      const random = seeded(seed)
      const ratios = Array.from({ length: 30 }, () => (1.3 * (1 + 0.2 * gaussian(random))) / (1 + 0.2 * gaussian(random)))
      const i = medianInterval(ratios, 0.95)
      if (i.lower <= 1.3 && 1.3 <= i.upper) covered++
    }
    expect(covered / 200).toBeGreaterThanOrEqual(0.9)
  })

  it("stays exact for many values (no term of the binomial underflows)", () => {
    const xs = Array.from({ length: 5000 }, (_, i) => i)
    const i = medianInterval(xs)
    expect(i.level).toBeGreaterThanOrEqual(0.95)
    expect(i.lower).toBeGreaterThan(2300)
    expect(i.upper).toBeLessThan(2700)
  })
})

describe("verdicts", () => {
  const at = (lower: number, median: number, upper: number, n = 40) => ({ n, median, lower, upper, level: 0.96, confidence: 0.95 })

  it("is met at or under the target, not met over it, undecided across it with the pairs that would decide", () => {
    expect(verdict(at(0.9, 1, 1.1), 1.1).state).toBe("met")
    expect(verdict(at(1.11, 1.2, 1.3), 1.1).state).toBe("not met")
    const across = verdict(at(1.0, 1.05, 1.2), 1.1)
    expect(across.state).toBe("undecided")
    // the half-width toward the target, log(1.2 / 1.05), must shrink to log(1.1 / 1.05): about 3.8 times the pairs
    expect(across.state === "undecided" && across.morePairs).toBe(Math.ceil(40 * (Math.log(1.2 / 1.05) / Math.log(1.1 / 1.05)) ** 2) - 40)
    expect(formatVerdict(across)).toMatch(/^undecided: \d+ more pairs$/)
    expect(formatVerdict(verdict(at(1.0, 1.1, 1.2), 1.1))).toBe("undecided: the median sits at the target")
    expect(verdict(at(1, 2, 3), undefined).state).toBe("reference")
  })

  it("holds our side alone to an absolute target when asked", () => {
    const ours = Array.from({ length: 40 }, (_, i) => 3 + (i % 5) * 0.1)
    const theirs = ours.map((x) => x / 3)
    const j = judge(ours, theirs, 4, { decideBy: "ours" })
    expect(j.verdict.state).toBe("met")
    expect(j.ratio.median).toBeCloseTo(3, 10)
    expect(judge(ours, theirs, 2).verdict.state).toBe("not met")
  })

  it("prints a median with its interval", () => {
    expect(formatInterval({ n: 20, median: 3.123, lower: 2.951, upper: 3.3, level: 0.96, confidence: 0.95 })).toBe("3.12x [2.95–3.30]")
    expect(formatInterval({ n: 20, median: 0.0223, lower: 0.02, upper: 0.025, level: 0.96, confidence: 0.95 })).toBe("0.0223x [0.0200–0.0250]")
    expect(medianOf([4, 1, 3, 2])).toBe(2.5)
  })
})

describe("the estimator on synthetic pairs with 20% noise", () => {
  it("decides \"met\" for a true ratio of 1.0 against a target of 1.1", async () => {
    const r = await trials(1.0, 1.1, 50)
    expect(r.states["not met"] ?? 0).toBe(0)
    expect(r.states["met"]).toBeGreaterThanOrEqual(47)
    const one = r.runs[0]!
    expect(one.verdict.state).toBe("met")
    expect(one.ratio.upper).toBeLessThanOrEqual(1.1)
  })

  it("decides \"not met\" for a true ratio of 1.2 against a target of 1.1", async () => {
    const r = await trials(1.2, 1.1, 50)
    expect(r.states["met"] ?? 0).toBe(0)
    expect(r.states["not met"]).toBeGreaterThanOrEqual(47)
  })

  it("covers the true ratio in at least 90% of 200 seeded rows", async () => {
    expect((await trials(1.0, 1.1, 200)).covered).toBeGreaterThanOrEqual(0.9)
    expect((await trials(1.2, 1.1, 200)).covered).toBeGreaterThanOrEqual(0.9)
  })

  it("seldom calls a row whose true ratio is its target, however often it looks", async () => {
    const r = await trials(1.1, 1.1, 200)
    const wrong = (r.states["met"] ?? 0) + (r.states["not met"] ?? 0)
    expect(wrong / 200).toBeLessThanOrEqual(0.1)
    expect(looksOf(12, 384)).toBe(6)
  })

  it("alternates which side goes first, half of the pairs each", async () => {
    const order: Array<boolean> = []
    let tick = 0
    const r = await estimate({
      target: undefined,
      minPairs: 11,
      warmup: 3,
      now: () => tick++,
      pair: async (oursFirst) => {
        order.push(oursFirst)
        return { ours: 2, theirs: 1 }
      }
    })
    // three warm-up pairs, then an even number counted, ours first in exactly half
    const counted = order.slice(3)
    expect(r.pairs).toBe(12)
    expect(counted.length).toBe(12)
    expect(counted.filter((x) => x).length).toBe(6)
    expect(counted[0]).toBe(true)
    expect(r.verdict.state).toBe("reference")
    expect(formatInterval(r.ratio)).toBe("2.00x [2.00–2.00]")
  })

  it("stops at its time cap and at its pair cap, undecided, saying how many more pairs it needs", async () => {
    // a clock that moves 10 s a reading: by the first look, a 5 s cap has passed
    let clock = 0
    const timed = await synthetic(1.08, 1.1, 7, { now: () => (clock += 10_000), maxMillis: 5_000 })
    expect(timed.pairs).toBe(12)
    expect(timed.verdict.state).toBe("undecided")
    expect(formatVerdict(timed.verdict)).toMatch(/^undecided: \d+ more pairs$/)
    // a clock that moves one tick a pair (the warm-up's included): a cap of 20 stops the second batch
    // of 12 part way, at the first even count once 20 ticks have passed
    let pairs = 0
    const cut = await synthetic(1.08, 1.1, 7, { now: () => pairs, maxMillis: 20, pair: async () => ({ ours: 1.08 + (++pairs % 7) * 0.01, theirs: 1 }) })
    expect(cut.pairs).toBe(20)
    const capped = await synthetic(1.08, 1.1, 7, { maxPairs: 48 })
    expect(capped.pairs).toBe(48)
    expect(capped.verdict.state).toBe("undecided")
  })

  it("fails a row whose pair does not end in its time", async () => {
    const started = performance.now()
    await expect(estimate({ target: 1, warmup: 0, pairTimeoutMillis: 50, pair: () => new Promise(() => {}) })).rejects.toThrow(/longer than 0.05 s/)
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  it("refuses a pair that did not measure a time", async () => {
    await expect(estimate({ target: 1, pair: async () => ({ ours: Number.NaN, theirs: 1 }) })).rejects.toThrow(/not a time/)
    await expect(estimate({ target: 1, pair: async () => ({ ours: 1, theirs: 0 }) })).rejects.toThrow(/not a time/)
  })
})
