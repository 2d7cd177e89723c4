/**
 * Rounds: every target runs once per round, in an order that turns by one each round, so that a
 * burst of load from elsewhere on the machine falls on all of them alike rather than on whichever
 * ran at that moment; a {@link Tally} adds up each target's rounds.
 */
import type * as Cpu from "./Cpu.js"
import * as Percentile from "./Percentile.js"

/** `targets` in the order of round `round` (a negative round, a warm-up, turns the other way). */
export const rotate = <A>(targets: ReadonlyArray<A>, round: number): Array<A> =>
  targets.map((_, k) => targets[(((k + round) % targets.length) + targets.length) % targets.length]!)

/** `rounds` rounds of `measure` over `targets`, one after the other, in {@link rotate}'s order. */
export const run = async <A>(
  rounds: number,
  targets: ReadonlyArray<A>,
  measure: (target: A, round: number) => Promise<void>
): Promise<void> => {
  for (let round = 0; round < rounds; round++) {
    for (const target of rotate(targets, round)) await measure(target, round)
  }
}

/** One target's rounds: operations, seconds and CPU summed, each round's rate, every latency. */
export class Tally {
  count = 0
  seconds = 0
  nodeUs = 0
  postgresUs = 0
  /** Each round's operations per second. */
  readonly perRound: Array<number> = []
  /** ms, of every round. */
  readonly latencies: Array<number> = []

  add(count: number, seconds: number, cpu?: Pick<Cpu.Used, "nodeUs" | "postgresUs">): void {
    this.count += count
    this.seconds += seconds
    this.nodeUs += cpu?.nodeUs ?? 0
    this.postgresUs += cpu?.postgresUs ?? 0
    this.perRound.push(count / seconds)
  }

  /** Operations per second over every round: all operations over all the time. */
  rate(): number {
    return this.count / this.seconds
  }

  /** The `p`th percentile of the latencies, ms to two decimals. */
  latencyMs(p: number): number {
    this.latencies.sort((a, b) => a - b)
    return Number(Percentile.of(this.latencies, p).toFixed(2))
  }

  /** CPU per operation, µs. */
  cpuPerOperation(): { readonly node: number; readonly postgres: number } {
    const per = (us: number) => Math.round(us / Math.max(1, this.count))
    return { node: per(this.nodeUs), postgres: per(this.postgresUs) }
  }
}
