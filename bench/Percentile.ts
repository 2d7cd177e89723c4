/** Percentiles of measured values (latencies, sizes), as every bench reports them. */

/** The `p`th percentile of ascending values (0 when there are none). */
export const of = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** An ascending copy, for {@link of}. */
export const sorted = (values: ReadonlyArray<number>): Array<number> => [...values].sort((a, b) => a - b)
