/**
 * The log's Merkle tree and signed checkpoints in the log's own database (the `TransparencyLog`
 * port). The tree's leaves are the events in catch-up order — `(transaction_id, global_position)`,
 * only transactions below the snapshot's xmin — so a transaction that commits late lands after every
 * leaf already placed, never below a checkpoint already signed. One writer at a time extends it (the
 * head row's lock); each complete subtree's hash is stored once, so a root or a proof reads
 * O(log n) rows and never rescans the log.
 */
import type * as EventStore from "@cobro/domain/EventStore"
import * as TransparencyLog from "@cobro/domain/TransparencyLog"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Checkpoint from "./Checkpoint.js"
import * as Ddl from "./internal/Ddl.js"
import * as Rows from "./internal/Rows.js"
import * as MerkleTree from "./MerkleTree.js"

/**
 * The tables (migration `9_transparency_log`): the head (how many leaves, and the last one's
 * catch-up position), each leaf's event, the hashes of the complete subtrees of
 * {@link STORED_LEVEL} and up, and the signed checkpoints.
 */
export const migration: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Ddl.run([
  `CREATE TABLE cobro_tree_head (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      size bigint NOT NULL,
      transaction_id xid8 NOT NULL,
      global_position bigint NOT NULL
    )`,
  `INSERT INTO cobro_tree_head (size, transaction_id, global_position) VALUES (0, '0'::xid8, 0)`,
  `CREATE TABLE cobro_tree_leaves (
      leaf_index bigint PRIMARY KEY,
      global_position bigint NOT NULL UNIQUE
    )`,
  `CREATE TABLE cobro_tree_nodes (
      level smallint NOT NULL,
      index bigint NOT NULL,
      hash bytea NOT NULL,
      PRIMARY KEY (level, index)
    )`,
  `CREATE TABLE cobro_tree_checkpoints (
      tree_size bigint PRIMARY KEY,
      note text NOT NULL,
      verifier_key text NOT NULL,
      signed_at timestamptz NOT NULL DEFAULT now()
    )`
])

/** Events added to the tree per transaction. */
export const DEFAULT_BATCH = 5000

const hex = (hash: Uint8Array) => Buffer.from(hash).toString("hex")
const unhex = (text: string) => new Uint8Array(Buffer.from(text, "hex"))

/** The leaf of an event: its chain hash's 32 bytes. */
export const leafOf = (eventHash: string): MerkleTree.Hash => MerkleTree.leafHash(unhex(eventHash))

interface Head {
  readonly size: number
  readonly transactionId: string
  readonly globalPosition: string
}

const readHead = (sql: SqlClient.SqlClient, lock: boolean) =>
  sql<{ size: string; transaction_id: string; global_position: string }>`
    SELECT size::text AS size, transaction_id::text AS transaction_id, global_position::text AS global_position
    FROM cobro_tree_head ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
    Effect.map((rows): Head => ({
      size: Number(rows[0]?.size ?? 0),
      transactionId: rows[0]?.transaction_id ?? "0",
      globalPosition: rows[0]?.global_position ?? "0"
    }))
  )

/**
 * The lowest level of the subtrees whose hashes are stored: those of 16 leaves and more. A smaller
 * one is computed from its leaves, read with their events' hashes (at most 15 per part). Storing
 * every level cost three rows per event; this costs one and an eighth.
 */
export const STORED_LEVEL = 4

const keyOf = (part: MerkleTree.Subtree) => `${part.level}:${part.index}`

/** The hashes of complete subtrees (of a tree no larger than the stored one), by `level:index`. */
const subtreeHashes = (sql: SqlClient.SqlClient, parts: ReadonlyArray<MerkleTree.Subtree>) =>
  Effect.gen(function* () {
    const found = new Map<string, MerkleTree.Hash>()
    const stored = parts.filter((p) => p.level >= STORED_LEVEL)
    const small = parts.filter((p) => p.level < STORED_LEVEL)
    if (stored.length > 0) {
      const rows = yield* sql<{ level: number; index: string; hash: string }>`
        SELECT n.level, n.index::text AS index, encode(n.hash, 'hex') AS hash
        FROM unnest(${stored.map((p) => p.level)}::smallint[], ${stored.map((p) => String(p.index))}::bigint[]) AS k(level, index)
        JOIN cobro_tree_nodes n ON n.level = k.level AND n.index = k.index`
      for (const row of rows) found.set(`${row.level}:${row.index}`, unhex(row.hash))
    }
    if (small.length > 0) {
      const indexes = new Set<number>()
      for (const p of small) {
        for (let i = p.index * 2 ** p.level; i < (p.index + 1) * 2 ** p.level; i++) indexes.add(i)
      }
      const rows = yield* sql<{ leaf_index: string; hash: string }>`
        SELECT l.leaf_index::text AS leaf_index, e.hash
        FROM cobro_tree_leaves l JOIN cobro_events e ON e.global_position = l.global_position
        WHERE l.leaf_index = ANY(${[...indexes].map(String)}::bigint[])`
      const leaves = new Map(rows.map((row) => [Number(row.leaf_index), leafOf(row.hash)]))
      for (const p of small) {
        const first = p.index * 2 ** p.level
        const hashes = Array.from({ length: 2 ** p.level }, (_, i) => leaves.get(first + i))
        if (hashes.every((h) => h !== undefined)) found.set(keyOf(p), MerkleTree.rootOf(hashes))
      }
    }
    const missing = parts.find((p) => !found.has(keyOf(p)))
    return missing === undefined
      ? found
      : yield* Effect.dieMessage(`the stored tree lacks subtree ${missing.level}:${missing.index}`)
  })

/** The tree hashes of ranges of a tree no larger than the stored one, from its stored subtrees. */
const rangeHashes = (sql: SqlClient.SqlClient, ranges: ReadonlyArray<MerkleTree.Range>) =>
  Effect.gen(function* () {
    const parts = ranges.map(([from, to]) => MerkleTree.subtrees(from, to))
    const found = yield* subtreeHashes(sql, parts.flat())
    return parts.map((list) => MerkleTree.foldSubtrees(list.map((p) => found.get(keyOf(p))!)))
  })

/**
 * Adds the next batch of settled events to the tree in one transaction, under the head row's lock:
 * the events after the head in catch-up order whose transactions are below the snapshot's xmin (no
 * transaction that could still commit one below them is running). Returns the tree's size after it
 * and how many leaves it added.
 */
export const extendOnce = (
  batchSize: number = DEFAULT_BATCH
): Effect.Effect<{ readonly size: number; readonly added: number }, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const head = yield* readHead(sql, true)
        // Output names apart from the columns': `ORDER BY global_position` would sort the text.
        const events = yield* sql<{ position: string; xid: string; hash: string }>`
          SELECT global_position::text AS position, transaction_id::text AS xid, hash
          FROM cobro_events
          WHERE (transaction_id, global_position) > (${head.transactionId}::xid8, ${head.globalPosition}::bigint)
            AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
          ORDER BY transaction_id, global_position
          LIMIT ${batchSize}`
        const last = events[events.length - 1]
        if (last === undefined) return { size: head.size, added: 0 }
        const edgeParts = MerkleTree.subtrees(0, head.size)
        const edge = yield* subtreeHashes(sql, edgeParts)
        const frontier = new MerkleTree.Frontier(
          head.size,
          edgeParts.map((p) => edge.get(keyOf(p))!)
        )
        const levels: Array<number> = []
        const indexes: Array<string> = []
        const hashes: Array<string> = []
        const record = (subtree: MerkleTree.Subtree, hash: MerkleTree.Hash) => {
          if (subtree.level < STORED_LEVEL) return
          levels.push(subtree.level)
          indexes.push(String(subtree.index))
          hashes.push(hex(hash))
        }
        for (const event of events) frontier.push(leafOf(event.hash), record)
        if (levels.length > 0) {
          yield* sql`
            INSERT INTO cobro_tree_nodes (level, index, hash)
            SELECT level, index, decode(hash, 'hex')
            FROM unnest(${levels}::smallint[], ${indexes}::bigint[], ${hashes}::text[]) AS n(level, index, hash)`
        }
        yield* sql`
          INSERT INTO cobro_tree_leaves (leaf_index, global_position)
          SELECT ${head.size}::bigint + ord - 1, global_position
          FROM unnest(${events.map((e) => e.position)}::bigint[]) WITH ORDINALITY AS l(global_position, ord)`
        yield* sql`
          UPDATE cobro_tree_head SET size = ${frontier.size},
            transaction_id = ${last.xid}::xid8, global_position = ${last.position}::bigint`
        return { size: frontier.size, added: events.length }
      })
    )
  ).pipe(Effect.withSpan("PgTransparencyLog.extendOnce"))

/** Extends the tree until it holds every settled event; its size after. */
export const extend = (
  batchSize: number = DEFAULT_BATCH
): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    while (true) {
      const { added, size } = yield* extendOnce(batchSize)
      if (added < batchSize) return size
    }
  })

/** The number of leaves in the tree. */
export const treeSize: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.map(readHead(sql, false), (head) => head.size)
)

/** The tree hash of the first `size` leaves (at most the tree's size). */
export const rootAt = (
  size: number
): Effect.Effect<MerkleTree.Hash, SqlError | TransparencyLog.SizeOutOfRange, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const head = yield* readHead(sql, false)
    if (!(Number.isSafeInteger(size) && size >= 0 && size <= head.size)) {
      return yield* new TransparencyLog.SizeOutOfRange({
        message: `no tree of ${size} leaves: the tree has ${head.size}`,
        treeSize: head.size
      })
    }
    if (size === 0) return MerkleTree.emptyRoot
    const [root] = yield* rangeHashes(sql, [[0, size]])
    return root!
  })

// Output names apart from the columns': `ORDER BY tree_size` would sort the text.
interface CheckpointRow {
  readonly size: string
  readonly note: string
  readonly signed_at: Date | string
}

const toSigned = (row: CheckpointRow): TransparencyLog.SignedCheckpoint => ({
  size: Number(row.size),
  note: row.note,
  signedAt: row.signed_at instanceof Date ? row.signed_at : new Date(row.signed_at)
})

/** The checkpoint of the largest tree signed, if any. */
export const latestCheckpoint: Effect.Effect<
  Option.Option<TransparencyLog.SignedCheckpoint>,
  SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<CheckpointRow>`
    SELECT tree_size::text AS size, note, signed_at FROM cobro_tree_checkpoints
    ORDER BY tree_size DESC LIMIT 1`
).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSigned)))

/** The checkpoint signed at exactly this tree size, if any. */
export const checkpointAt = (
  size: number
): Effect.Effect<Option.Option<TransparencyLog.SignedCheckpoint>, SqlError, SqlClient.SqlClient> =>
  Number.isSafeInteger(size) && size >= 0
    ? Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<CheckpointRow>`
          SELECT tree_size::text AS size, note, signed_at FROM cobro_tree_checkpoints
          WHERE tree_size = ${size}`
      ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toSigned)))
    : Effect.succeed(Option.none())

/**
 * Signs a checkpoint of the tree as it is (after {@link extend} when `catchUp`), under the head's
 * lock so that checkpoints are signed in size order; a size signed already keeps its first note.
 */
export const sign = (
  signer: Checkpoint.Signer,
  options: { readonly catchUp?: boolean } = {}
): Effect.Effect<TransparencyLog.SignedCheckpoint, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    if (options.catchUp !== false) yield* extend()
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        const head = yield* readHead(sql, true)
        const [root] = head.size === 0 ? [MerkleTree.emptyRoot] : yield* rangeHashes(sql, [[0, head.size]])
        const note = Checkpoint.signWith(signer, { origin: signer.origin, size: head.size, root: root! })
        const now = yield* Clock.currentTimeMillis
        yield* sql`
          INSERT INTO cobro_tree_checkpoints (tree_size, note, verifier_key, signed_at)
          VALUES (${head.size}, ${note}, ${Checkpoint.verifierKeyOf(signer)}, ${new Date(now).toISOString()}::timestamptz)
          ON CONFLICT (tree_size) DO NOTHING`
        const stored = yield* checkpointAt(head.size)
        return Option.getOrThrow(stored)
      })
    )
  }).pipe(Effect.withSpan("PgTransparencyLog.sign"))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The audit path of an event in the tree of `treeSize` leaves. */
export const inclusionProof = (
  eventId: string,
  treeSize: number
): Effect.Effect<
  TransparencyLog.InclusionProof,
  SqlError | TransparencyLog.UnknownEvent | TransparencyLog.NotInTreeOfSize | TransparencyLog.SizeOutOfRange,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const head = yield* readHead(sql, false)
    if (!(Number.isSafeInteger(treeSize) && treeSize >= 1 && treeSize <= head.size)) {
      return yield* new TransparencyLog.SizeOutOfRange({
        message: `tree_size must be from 1 to the tree's size, ${head.size}`,
        treeSize: head.size
      })
    }
    if (!UUID.test(eventId)) return yield* new TransparencyLog.UnknownEvent({ eventId })
    const rows = yield* sql<{ leaf_index: string; hash: string; event_id: string }>`
      SELECT l.leaf_index::text AS leaf_index, e.hash, e.event_id::text AS event_id
      FROM cobro_events e JOIN cobro_tree_leaves l ON l.global_position = e.global_position
      WHERE e.event_id = ${eventId.toLowerCase()}::uuid`
    const row = rows[0]
    if (row === undefined) return yield* new TransparencyLog.UnknownEvent({ eventId })
    const leafIndex = Number(row.leaf_index)
    if (leafIndex >= treeSize) {
      return yield* new TransparencyLog.NotInTreeOfSize({ eventId: row.event_id, leafIndex, treeSize })
    }
    const hashes = yield* rangeHashes(sql, MerkleTree.inclusionRanges(leafIndex, treeSize))
    return { eventId: row.event_id, leafIndex, treeSize, eventHash: row.hash, hashes }
  }).pipe(Effect.withSpan("PgTransparencyLog.inclusionProof"))

/** The event with this id as stored, to check its content against its leaf (`HashChain.hashEvent`). */
export const eventById = (
  eventId: string
): Effect.Effect<Option.Option<EventStore.RecordedEvent>, SqlError, SqlClient.SqlClient> =>
  UUID.test(eventId)
    ? Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<Rows.EventRow>`
          SELECT ${sql.literal(Rows.columns)} FROM cobro_events WHERE event_id = ${eventId.toLowerCase()}::uuid`
      ).pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), Rows.toRecorded)))
    : Effect.succeed(Option.none())

/** The consistency proof from the tree of `from` leaves to the tree of `to`. */
export const consistencyProof = (
  from: number,
  to: number
): Effect.Effect<
  TransparencyLog.ConsistencyProof,
  SqlError | TransparencyLog.SizeOutOfRange,
  SqlClient.SqlClient
> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const head = yield* readHead(sql, false)
    if (!(
      Number.isSafeInteger(from) &&
      Number.isSafeInteger(to) &&
      from >= 1 &&
      from <= to &&
      to <= head.size
    )) {
      return yield* new TransparencyLog.SizeOutOfRange({
        message: `from and to must satisfy 1 ≤ from ≤ to ≤ ${head.size} (the tree's size)`,
        treeSize: head.size
      })
    }
    const hashes = yield* rangeHashes(sql, MerkleTree.consistencyRanges(from, to))
    return { from, to, hashes }
  }).pipe(Effect.withSpan("PgTransparencyLog.consistencyProof"))

/** When the background worker extends the tree and signs. */
export interface RunOptions {
  readonly signer: Checkpoint.Signer
  /** A checkpoint once this many events have joined the tree since the last one (default 10,000). */
  readonly everyEvents?: number
  /** A checkpoint once this long has passed since the last one, if the tree grew (default 60 s). */
  readonly every?: Duration.DurationInput
  /** How often the tree takes in the newly settled events (default 1 s). */
  readonly pollInterval?: Duration.DurationInput
  readonly batchSize?: number
}

/** The defaults of {@link RunOptions}. */
export const defaults = {
  everyEvents: 10_000,
  every: Duration.seconds(60),
  pollInterval: Duration.seconds(1)
}

/**
 * The worker: every `pollInterval`, adds the settled events to the tree, then signs a checkpoint
 * when `everyEvents` have joined since the last one or `every` has passed and the tree grew. Runs
 * for ever; several nodes may run it (the head's lock orders them; a size is signed once).
 */
export const run = (options: RunOptions): Effect.Effect<never, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const everyEvents = options.everyEvents ?? defaults.everyEvents
    const everyMillis = Duration.toMillis(options.every ?? defaults.every)
    const poll = options.pollInterval ?? defaults.pollInterval
    while (true) {
      const size = yield* extend(options.batchSize)
      const last = yield* latestCheckpoint
      const now = yield* Clock.currentTimeMillis
      const due = Option.match(last, {
        onNone: () => size > 0,
        onSome: (c) =>
          size > c.size && (size - c.size >= everyEvents || now - c.signedAt.getTime() >= everyMillis)
      })
      if (due) yield* sign(options.signer, { catchUp: false })
      yield* Effect.sleep(poll)
    }
  })

/** The `TransparencyLog` port over the database in context, signing with `signer`. */
export const layer = (
  signer: Checkpoint.Signer
): Layer.Layer<TransparencyLog.TransparencyLog, never, SqlClient.SqlClient> =>
  Layer.effect(
    TransparencyLog.TransparencyLog,
    Effect.map(SqlClient.SqlClient, (sql) => {
      // A database failure is a defect here: the port's callers answer it as any other (a 500).
      const provide = <A, E>(
        effect: Effect.Effect<A, E, SqlClient.SqlClient>
      ): Effect.Effect<A, Exclude<E, SqlError>> =>
        Effect.provideService(effect, SqlClient.SqlClient, sql).pipe(
          Effect.catchAll((error) =>
            (error as { _tag?: unknown })._tag === "SqlError"
              ? Effect.die(error)
              : Effect.fail(error as Exclude<E, SqlError>)
          )
        )
      return TransparencyLog.TransparencyLog.of({
        verifierKey: Checkpoint.verifierKeyOf(signer),
        treeSize: provide(treeSize),
        latestCheckpoint: provide(latestCheckpoint),
        checkpointAt: (size) => provide(checkpointAt(size)),
        inclusionProof: (eventId, size) => provide(inclusionProof(eventId, size)),
        consistencyProof: (from, to) => provide(consistencyProof(from, to))
      })
    })
  )
