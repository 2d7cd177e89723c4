/**
 * The statements and transactions this process sends to PostgreSQL, counted as each `pg` client
 * sends them: every target, its background workers and a peer library share the one `pg` module,
 * while a load generator speaking HTTP sends none. A statement is a round trip (`BEGIN` and `COMMIT`
 * included); a transaction is an explicit `BEGIN`, or a statement sent outside one (it commits on its
 * own).
 */
import { performance } from "node:perf_hooks"
import * as Pg from "pg"

export interface Counter {
  readonly statements: number
  readonly transactions: number
  /**
   * With `byText`, per statement text (white space folded, its first 140 characters): how many were
   * sent, and the ms from sending each to its answer. Cleared by whoever reads it, per phase.
   */
  readonly byText: Map<string, { count: number; ms: number }> | undefined
}

let installed = false

/** Starts counting; once per process, as it wraps `pg`'s one `query`. */
export const count = (options: { readonly byText: boolean }): Counter => {
  if (installed) throw new Error("Statements.count: already counting")
  installed = true
  const counter = {
    statements: 0,
    transactions: 0,
    byText: options.byText ? new Map<string, { count: number; ms: number }>() : undefined
  }
  const inTransaction = new WeakSet<object>()
  const query = Pg.Client.prototype.query as (...args: Array<any>) => any
  Pg.Client.prototype.query = function (this: Pg.Client, ...args: Array<any>) {
    const first = args[0]
    const text: string = typeof first === "string" ? first : typeof first?.text === "string" ? first.text : ""
    const head = text.trimStart().slice(0, 8).toUpperCase()
    counter.statements++
    if (head.startsWith("BEGIN") || head.startsWith("START")) {
      inTransaction.add(this)
      counter.transactions++
    } else if (head.startsWith("COMMIT") || head.startsWith("ROLLBACK") || head.startsWith("END")) {
      inTransaction.delete(this)
    } else if (!inTransaction.has(this)) counter.transactions++
    if (counter.byText === undefined) return query.apply(this, args)
    const key = (text || first?.name || "?").replace(/\s+/g, " ").slice(0, 140)
    const entry = counter.byText.get(key) ?? { count: 0, ms: 0 }
    entry.count++
    counter.byText.set(key, entry)
    const sent = performance.now()
    const answered = () => (entry.ms += performance.now() - sent)
    const last = args.length - 1
    if (typeof args[last] === "function") {
      const callback = args[last]
      args[last] = (...results: Array<unknown>) => {
        answered()
        return callback(...results)
      }
    }
    const result = query.apply(this, args)
    if (typeof result?.then === "function") result.then(answered, answered)
    return result
  } as typeof Pg.Client.prototype.query
  return counter
}
