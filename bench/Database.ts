/**
 * The benches' throwaway databases, on the PostgreSQL server of `DATABASE_URL` (default
 * postgres://postgres@127.0.0.1:5432/postgres): each target gets a fresh database of its own, dropped
 * once it is done, so that no run sees another's rows or plans.
 */
import { randomBytes } from "node:crypto"
import * as Pg from "pg"

/** The server; its database only hosts the statements that create and drop the others. */
const serverUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** Database `name` on the same server, as the same user. */
const urlOf = (name: string): string => {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** Runs one statement on a connection of its own (`CREATE DATABASE` cannot run in a transaction). */
const onServer = async (statement: string): Promise<void> => {
  const client = new Pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

export interface Database {
  readonly name: string
  readonly url: string
}

/** Creates an empty database `cobro_bench_<label>_<random>` (a `-` in the label becomes `_`). */
export const create = async (label: string): Promise<Database> => {
  const name = `cobro_bench_${label.replaceAll("-", "_")}_${randomBytes(4).toString("hex")}`
  await onServer(`CREATE DATABASE ${name}`)
  return { name, url: urlOf(name) }
}

/**
 * Drops a database once the closed pools' sessions are gone. Forcing it at once would kill sessions
 * that a pool is still closing, and their unhandled `error` would end the run.
 */
export const drop = async (name: string): Promise<void> => {
  for (let i = 0; i < 50; i++) {
    try {
      return await onServer(`DROP DATABASE IF EXISTS ${name}`)
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

/** `use` on a fresh database ({@link create}), dropped afterwards whatever happens. */
export const scoped = async <A>(label: string, use: (database: Database) => Promise<A>): Promise<A> => {
  const database = await create(label)
  try {
    return await use(database)
  } finally {
    await drop(database.name)
  }
}
