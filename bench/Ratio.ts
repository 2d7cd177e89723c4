/**
 * Ratios of a target's rates to a floor's or a peer's, from the same rounds: machines differ, so a
 * bench's figures compare only within one run.
 */

/** `mine / theirs` to three decimals, as the JSON lines give a ratio. */
export const of = (mine: number, theirs: number): number => Number((mine / theirs).toFixed(3))

/** Each round's ratio, two decimals, space-separated: the spread that the ratio of the totals hides. */
export const perRound = (mine: ReadonlyArray<number>, theirs: ReadonlyArray<number>): string =>
  mine.map((rate, i) => (rate / (theirs[i] ?? NaN)).toFixed(2)).join(" ")

/** A ratio as the benches print it: `<ratio> [<per round>]`. */
export const describe = (
  ratio: string | number,
  mine: ReadonlyArray<number>,
  theirs: ReadonlyArray<number>
) => `${ratio} [${perRound(mine, theirs)}]`
