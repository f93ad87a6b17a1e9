// Types of bench/estimate.mjs, for the tests that import it.

/** A confidence interval for a median, from order statistics. */
export interface Interval {
  readonly n: number
  readonly median: number
  readonly lower: number
  readonly upper: number
  /** The coverage the chosen ranks guarantee. */
  readonly level: number
  readonly confidence: number
}

/** Whether a row met its target. */
export type Verdict =
  | { readonly state: "met" | "not met" | "reference" }
  | { readonly state: "undecided"; readonly morePairs: number }

/** How a row is judged: its confidence, and whether the ratio or our side alone is held to the target. */
export interface JudgeOptions {
  readonly confidence?: number
  readonly decideBy?: "ratio" | "ours"
}

/** The figures of a set of pairs. */
export interface Judgement {
  readonly pairs: number
  readonly ours: number
  readonly theirs: number
  readonly ratio: Interval
  readonly own: Interval
  readonly decideBy: "ratio" | "ours"
  readonly target: number | undefined
  readonly verdict: Verdict
}

/** What `estimate` needs: a pair to measure and its limits. */
export interface EstimateOptions extends JudgeOptions {
  readonly pair: (oursFirst: boolean, index: number) => Promise<{ readonly ours: number; readonly theirs: number }>
  readonly target: number | undefined
  readonly warmup?: number
  readonly minPairs?: number
  readonly maxPairs?: number
  readonly maxMillis?: number
  readonly pairTimeoutMillis?: number
  readonly now?: () => number
}

/** A row's figures with every pair it measured. */
export interface Estimate extends Judgement {
  readonly samples: { readonly ours: ReadonlyArray<number>; readonly theirs: ReadonlyArray<number> }
  readonly millis: number
}

export declare const CONFIDENCE: number
export declare const medianOf: (xs: ReadonlyArray<number>) => number
export declare const medianInterval: (xs: ReadonlyArray<number>, confidence?: number) => Interval
export declare const verdict: (interval: Interval, target: number | undefined) => Verdict
export declare const minPairsFor: (confidence?: number) => number
export declare const judge: (ours: ReadonlyArray<number>, theirs: ReadonlyArray<number>, target: number | undefined, options?: JudgeOptions) => Judgement
export declare const looksOf: (minPairs: number, maxPairs: number) => number
export declare const estimate: (options: EstimateOptions) => Promise<Estimate>
export declare const formatInterval: (interval: Interval, unit?: string) => string
export declare const formatVerdict: (v: Verdict) => string
export declare const seeded: (seed: number) => () => number
