/**
 * `Statements.count`'s figures split by the database each `pg` client is connected to: with several
 * targets in one process, each on a database of its own, a phase's statements are those of the
 * target under load, its idle peers' background workers left out.
 */
import * as Pg from "pg"
import type * as Statements from "./Statements.js"

export interface Sent {
  statements: number
  transactions: number
}

/**
 * Starts splitting `counter` by database; install it after `Statements.count`. Its wrapper counts
 * synchronously as each statement is sent, so the counter's growth during the call is that
 * statement's, of this client's database.
 */
export const byDatabase = (counter: Statements.Counter): ReadonlyMap<string, Sent> => {
  const sent = new Map<string, Sent>()
  const counted = Pg.Client.prototype.query as (...args: Array<any>) => any
  Pg.Client.prototype.query = function (this: Pg.Client, ...args: Array<any>) {
    const statements = counter.statements
    const transactions = counter.transactions
    const result = counted.apply(this, args)
    const database = this.database ?? ""
    const mine = sent.get(database) ?? { statements: 0, transactions: 0 }
    mine.statements += counter.statements - statements
    mine.transactions += counter.transactions - transactions
    sent.set(database, mine)
    return result
  } as typeof Pg.Client.prototype.query
  return sent
}

/** What `database` has been sent so far (a copy, to subtract from a later reading). */
export const of = (sent: ReadonlyMap<string, Sent>, database: string): Sent => ({
  statements: sent.get(database)?.statements ?? 0,
  transactions: sent.get(database)?.transactions ?? 0
})
