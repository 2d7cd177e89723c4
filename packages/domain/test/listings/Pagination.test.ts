import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Pagination from "@cobro/domain/Pagination"

/** A list of unique ids, already in order (the rule never looks at the order, only at positions). */
const rows = FastCheck.uniqueArray(FastCheck.string({ minLength: 1, maxLength: 6 }), { maxLength: 60 })
const limit = FastCheck.integer({ min: 1, max: Pagination.MAX_LIMIT })

const page = (list: ReadonlyArray<string>, request: Pagination.PageRequest) =>
  Either.getOrThrow(Pagination.paginate(list, (id) => id, request))

/** Every page of a walk from the first page on with `starting_after`, each of `limits[i % n]`. */
const walkForward = (list: ReadonlyArray<string>, limits: ReadonlyArray<number>) => {
  const pages: Array<Pagination.Page<string>> = [page(list, { limit: limits[0]! })]
  while (pages[pages.length - 1]!.hasMore) {
    const last = pages[pages.length - 1]!.data
    pages.push(
      page(list, { limit: limits[pages.length % limits.length]!, startingAfter: last[last.length - 1]! })
    )
  }
  return pages
}

/** Every page of a walk from `start` back to the newest row with `ending_before`. */
const walkBackward = (list: ReadonlyArray<string>, start: string, limits: ReadonlyArray<number>) => {
  const pages: Array<Pagination.Page<string>> = [page(list, { limit: limits[0]!, endingBefore: start })]
  while (pages[pages.length - 1]!.hasMore) {
    const first = pages[pages.length - 1]!.data[0]!
    pages.push(page(list, { limit: limits[pages.length % limits.length]!, endingBefore: first }))
  }
  return pages
}

describe("Pagination.paginate", () => {
  it.prop(
    "a walk with starting_after shows every row once, in order; has_more is false on the last page alone",
    [rows, FastCheck.array(limit, { minLength: 1, maxLength: 5 })],
    ([list, limits]) => {
      const pages = walkForward(list, limits)
      expect(pages.flatMap((p) => p.data)).toEqual(list)
      pages.forEach((p, i) => {
        expect(p.hasMore).toBe(i < pages.length - 1)
        // A page is never empty but for the only page of an empty list, nor longer than asked.
        if (list.length > 0) expect(p.data.length).toBeGreaterThan(0)
        expect(p.data.length).toBeLessThanOrEqual(limits[i % limits.length]!)
      })
    }
  )

  it.prop(
    "a walk back with ending_before shows every newer row once, each page newest first",
    [
      rows.filter((list) => list.length > 0),
      FastCheck.nat(),
      FastCheck.array(limit, { minLength: 1, maxLength: 5 })
    ],
    ([list, n, limits]) => {
      const at = n % list.length
      const pages = walkBackward(list, list[at]!, limits)
      // Walking back, pages come newest-last: reversed, they are the rows before the cursor in order.
      expect([...pages].reverse().flatMap((p) => p.data)).toEqual(list.slice(0, at))
      pages.forEach((p, i) => {
        expect(p.hasMore).toBe(i < pages.length - 1)
        expect(p.data.length).toBeLessThanOrEqual(limits[i % limits.length]!)
      })
    }
  )

  it.prop(
    "any walk back and forth: each page is the rows next to its cursor, and has_more says whether more lie beyond",
    [
      rows.filter((list) => list.length > 0),
      FastCheck.array(FastCheck.record({ forward: FastCheck.boolean(), limit }), { maxLength: 20 })
    ],
    ([list, steps]) => {
      let current = page(list, { limit: steps[0]?.limit ?? Pagination.DEFAULT_LIMIT })
      for (const step of steps) {
        if (current.data.length === 0) break
        const cursor = step.forward ? current.data[current.data.length - 1]! : current.data[0]!
        const at = list.indexOf(cursor)
        const next = page(
          list,
          step.forward
            ? { limit: step.limit, startingAfter: cursor }
            : { limit: step.limit, endingBefore: cursor }
        )
        const beyond = step.forward ? list.slice(at + 1) : list.slice(0, at)
        // The page is the run of rows adjacent to the cursor, in list order, none twice.
        expect(new Set(next.data).size).toBe(next.data.length)
        expect(next.data).toEqual(
          step.forward ? beyond.slice(0, step.limit) : beyond.slice(Math.max(0, beyond.length - step.limit))
        )
        expect(next.hasMore).toBe(beyond.length > step.limit)
        current = next
      }
    }
  )

  it("a cursor that names no row is refused, with the parameter that named it", () => {
    expect(Pagination.paginate(["a", "b"], (id) => id, { limit: 10, startingAfter: "z" })).toEqual(
      Either.left(new Pagination.UnknownCursor({ parameter: "starting_after", id: "z" }))
    )
    expect(Pagination.paginate(["a", "b"], (id) => id, { limit: 10, endingBefore: "z" })).toEqual(
      Either.left(new Pagination.UnknownCursor({ parameter: "ending_before", id: "z" }))
    )
  })
})
