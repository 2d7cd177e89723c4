/**
 * The strings of a JSON value, found and replaced one at a time: how the bad-input suites put text
 * a store cannot hold (a NUL, an unpaired surrogate) into each string of a valid body in turn.
 *
 * The server's PostgreSQL suite uses it too (`packages/server/test/BadInput.int.test.ts`).
 */

/** The paths of every string in a JSON value. */
export const stringPaths = (
  value: unknown,
  at: ReadonlyArray<string | number> = []
): Array<Array<string | number>> =>
  typeof value === "string"
    ? [[...at]]
    : Array.isArray(value)
      ? value.flatMap((v, i) => stringPaths(v, [...at, i]))
      : typeof value === "object" && value !== null
        ? Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...at, k]))
        : []

/** A copy of `value` with the string at `path` replaced by `f` of it. */
export const withString = (
  value: any,
  path: ReadonlyArray<string | number>,
  f: (s: string) => string
): any => {
  if (path.length === 0) return f(value)
  const copy: any = Array.isArray(value) ? [...value] : { ...value }
  copy[path[0]!] = withString(value[path[0]!], path.slice(1), f)
  return copy
}
