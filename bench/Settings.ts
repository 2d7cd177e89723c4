/** A bench's settings from the environment (`BENCH_ROUNDS=3 npm run bench -- store`). */

/** A number; `fallback` when the variable is unset or empty. */
export const number = (name: string, fallback: number): number => {
  const value = process.env[name]
  return value === undefined || value === "" ? fallback : Number(value)
}

/** A comma-separated list (empty items left out); `fallback`'s when the variable is unset. */
export const list = (name: string, fallback: string): Array<string> =>
  (process.env[name] ?? fallback).split(",").filter((item) => item !== "")
