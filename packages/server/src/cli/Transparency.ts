/**
 * The auditor's commands over the log's Merkle tree (RFC 9162) and its signed checkpoints (C2SP
 * tlog-checkpoint): the log's public key, a checkpoint signed now, an event's inclusion and two
 * checkpoints' consistency checked here against the signature (the database only supplies the
 * proofs), and an export checked against a checkpoint with no database at all.
 */
import * as Checkpoint from "@cobro/store-pg/Checkpoint"
import * as HashChain from "@cobro/store-pg/HashChain"
import * as MerkleTree from "@cobro/store-pg/MerkleTree"
import * as OfflineVerify from "@cobro/store-pg/OfflineVerify"
import * as PgTransparencyLog from "@cobro/store-pg/PgTransparencyLog"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as CheckpointKey from "../CheckpointKey.js"
import * as Config from "../Config.js"
import * as Store from "../Store.js"
import { Failed, UserError } from "./CliError.js"
import * as Environment from "./Environment.js"
import * as Output from "./Output.js"

const base64 = (hash: Uint8Array) => Buffer.from(hash).toString("base64")

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A file given on the command line, as text; a missing or unreadable file is the user's mistake. */
const readText = (what: string, path: string) =>
  Effect.try({
    try: () => Fs.readFileSync(path, "utf8"),
    catch: (cause) =>
      new UserError({
        message:
          (cause as NodeJS.ErrnoException).code === "ENOENT"
            ? `${what}: no file '${path}'`
            : `${what}: cannot read '${path}': ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })

/** A verifier key from a file, checked to be one (`cobro audit public-key` writes such a file). */
const readVerifierKey = (path: string) =>
  Effect.flatMap(readText("--public-key", path), (text) =>
    Checkpoint.parseVerifierKey(text) === undefined
      ? Effect.fail(
          new UserError({
            message: `--public-key: '${path}' does not hold a verifier key (<origin>+<key id>+<base64 key>, as cobro audit public-key prints it)`
          })
        )
      : Effect.succeed(text.trim())
  )

/**
 * The configured checkpoint key (`COBRO_CHECKPOINT_KEY`, else the key file in `DATA_DIR`), read
 * only: the command line never creates one, or an auditor's typo would mint a key nobody holds.
 */
const configuredSigner = Effect.gen(function* () {
  const config = yield* Config.config
  return yield* CheckpointKey.resolve(config, { create: false }).pipe(
    Effect.map((key) => key.signer),
    Effect.mapError((error) => {
      const dataDir = Path.resolve(config.database.dataDir)
      const missing =
        Option.isNone(config.checkpointKey) &&
        config.database._tag === "Pglite" &&
        !Fs.existsSync(Path.join(dataDir, CheckpointKey.fileName))
      return new UserError({
        message: missing
          ? `no checkpoint key in ${dataDir} (DATA_DIR): start the server once there (it creates ${CheckpointKey.fileName}), or set COBRO_CHECKPOINT_KEY`
          : error.message
      })
    })
  )
})

/** The verifier key to check with: `--public-key FILE`, else the configured key's. */
const verifierKeyFrom = (publicKey: Option.Option<string>) =>
  Option.match(publicKey, {
    onNone: () => Effect.map(configuredSigner, Checkpoint.verifierKeyOf),
    onSome: readVerifierKey
  })

/** A signed checkpoint opened with the key, or a failure naming where the note came from. */
const open = (what: string, note: string, key: string): Effect.Effect<Checkpoint.Checkpoint, Failed> => {
  const checkpoint = Checkpoint.openWithVerifierKey(note, key)
  return checkpoint === undefined
    ? Effect.fail(
        new Failed({
          message: `${what} is not a checkpoint signed by ${key.slice(0, key.indexOf("+"))}'s public key: it was altered, or signed by another key or for another log`
        })
      )
    : Effect.succeed(checkpoint)
}

/** The log's tree tables exist: a database older than the tree needs this version's server once. */
const requireTree = Environment.requireTable(
  "cobro_tree_head",
  "this database has no Merkle tree yet: start this version of the server once on it (its migrations add the tree)"
)

/** `cobro audit public-key`: the verifier key and a newline, what `--public-key FILE` reads. */
export const publicKey = Effect.flatMap(configuredSigner, (signer) =>
  Output.line(Checkpoint.verifierKeyOf(signer))
)

/**
 * The verifier key the log's checkpoints are signed with, as the first server on the database
 * recorded it (`Store.layerSetup`), if one has.
 */
const recordedKey = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql<{ present: boolean }>`
    SELECT to_regclass(${Store.settingsTable}) IS NOT NULL AS present`
  if (table?.present !== true) return Option.none<string>()
  const rows = yield* sql<{ value: string }>`
    SELECT value FROM ${sql(Store.settingsTable)} WHERE name = 'checkpoint_key'`
  return Option.fromNullable(rows[0]?.value)
})

/**
 * `cobro audit checkpoint`: the tree extended to every settled event and a checkpoint signed now;
 * the signed note on stdout byte for byte, so that `> file` keeps exactly what was signed.
 */
export const checkpoint = Effect.gen(function* () {
  const signer = yield* configuredSigner
  yield* requireTree
  const key = Checkpoint.verifierKeyOf(signer)
  const logKey = yield* recordedKey
  // The servers refuse another key than the log's (`Store.CheckpointKeyMismatch`); so does this.
  if (Option.isSome(logKey) && logKey.value !== key) {
    return yield* new UserError({
      message:
        `this log's checkpoints are signed with the key ${logKey.value}, and the configured key is ${key}: ` +
        "auditors hold the first and would reject what this one signs. Use the same COBRO_CHECKPOINT_KEY and COBRO_LOG_ORIGIN as the servers."
    })
  }
  const signed = yield* PgTransparencyLog.sign(signer)
  // A size already signed keeps its first note: after the key or COBRO_LOG_ORIGIN changed, that note
  // is not this key's, and printing it would hand the auditor a checkpoint its key cannot open.
  if (Checkpoint.openWithVerifierKey(signed.note, key) === undefined) {
    return yield* new Failed({
      message: `the checkpoint of tree size ${signed.size} was signed before with another key or log origin than the configured ${key}; it is kept as signed, so sign again once the log has grown`
    })
  }
  yield* Output.write(signed.note)
})

/** What `prove` checks, read before the database is opened. */
export interface ProveRequest {
  readonly eventId: string
  readonly key: string
  /** `--checkpoint FILE`, opened; none: the latest stored checkpoint. */
  readonly checkpoint: Option.Option<Checkpoint.Checkpoint>
  readonly json: boolean
}

/**
 * `cobro audit prove` before the database: the event id well formed, the key read, the checkpoint
 * file (if any) opened with it, so that a mistake or a bad signature needs no database.
 */
export const proveRequest = (options: {
  readonly eventId: string
  readonly checkpoint: Option.Option<string>
  readonly publicKey: Option.Option<string>
  readonly json: boolean
}): Effect.Effect<ProveRequest, UserError | Failed | import("effect/ConfigError").ConfigError> =>
  Effect.gen(function* () {
    if (!UUID.test(options.eventId)) {
      return yield* new UserError({
        message: `'${options.eventId}' is not an event id: give an event's UUID (the eventId of cobro audit export)`
      })
    }
    const key = yield* verifierKeyFrom(options.publicKey)
    const checkpoint = Option.isSome(options.checkpoint)
      ? Option.some(
          yield* open(
            options.checkpoint.value,
            yield* readText("--checkpoint", options.checkpoint.value),
            key
          )
        )
      : Option.none()
    return { eventId: options.eventId.toLowerCase(), key, checkpoint, json: options.json }
  })

/** The latest stored checkpoint, opened with the key. */
const latestOpened = (key: string) =>
  Effect.gen(function* () {
    const latest = yield* PgTransparencyLog.latestCheckpoint
    if (Option.isNone(latest)) {
      return yield* new UserError({ message: "no checkpoint yet: run cobro audit checkpoint" })
    }
    return yield* open(`the latest checkpoint (tree size ${latest.value.size})`, latest.value.note, key)
  })

/**
 * `cobro audit prove EVENT_ID`: the event's audit path in the checkpoint's tree, from the database,
 * checked here: the event's content hashes to its stored hash, and the path from that hash's leaf
 * leads to the root the checkpoint signs.
 */
export const prove = (request: ProveRequest) =>
  Effect.gen(function* () {
    yield* requireTree
    const checkpoint = Option.isSome(request.checkpoint)
      ? request.checkpoint.value
      : yield* latestOpened(request.key)
    const { eventId } = request
    if (checkpoint.size === 0) {
      return yield* new Failed({ message: "the checkpoint signs an empty tree: no event is in it" })
    }
    const proof = yield* PgTransparencyLog.inclusionProof(eventId, checkpoint.size).pipe(
      Effect.catchTags({
        UnknownEvent: () =>
          Effect.flatMap(PgTransparencyLog.eventById(eventId), (row) =>
            Effect.fail(
              new Failed({
                message: Option.isSome(row)
                  ? `event ${eventId} is in the log but not yet in its tree: run cobro audit checkpoint, then prove it against that checkpoint`
                  : `event ${eventId} is not in the log's tree (no event of the log has this id)`
              })
            )
          ),
        NotInTreeOfSize: (error) =>
          Effect.fail(
            new Failed({
              message: `event ${eventId} is leaf ${error.leafIndex} of the log's tree, after the checkpoint's ${error.treeSize} events: prove it against a later checkpoint (cobro audit checkpoint)`
            })
          ),
        SizeOutOfRange: (error) =>
          Effect.fail(
            new Failed({
              message: `the checkpoint signs ${checkpoint.size} events, past the ${error.treeSize} in this log's tree: it is not this log's, or the log lost events`
            })
          )
      })
    )
    const row = yield* PgTransparencyLog.eventById(eventId)
    if (Option.isNone(row)) {
      return yield* new Failed({ message: `event ${eventId} is in the tree but no longer in the log` })
    }
    const event = row.value
    const computed = HashChain.hashEvent(event.prevHash, event)
    const where = `event ${eventId} (${event.streamId} version ${event.streamVersion})`
    if (computed !== event.hash || computed !== proof.eventHash) {
      return yield* new Failed({
        message: `${where} was altered: its content hashes to ${computed}, not its stored hash ${event.hash}`
      })
    }
    const ok = MerkleTree.verifyInclusion(
      proof.leafIndex,
      checkpoint.size,
      PgTransparencyLog.leafOf(computed),
      proof.hashes,
      checkpoint.root
    )
    if (request.json) {
      yield* Output.line(
        JSON.stringify({
          ok,
          event_id: eventId,
          stream: event.streamId,
          version: event.streamVersion,
          event_hash: computed,
          leaf_index: proof.leafIndex,
          tree_size: checkpoint.size,
          root: base64(checkpoint.root),
          hashes: proof.hashes.map(base64)
        })
      )
    } else if (ok) {
      yield* Output.line(
        `OK: ${where} is leaf ${proof.leafIndex} of the ${checkpoint.size} events the checkpoint of ${checkpoint.origin} signs: its content hashes to its stored hash, and its audit path (${proof.hashes.length} hashes) leads to the checkpoint's root`
      )
    }
    if (!ok) {
      return yield* new Failed({
        message: `${where}: its audit path does not lead to the checkpoint's root: the log's tree is not the one the checkpoint signed, or the event was rewritten since`
      })
    }
  })

/** A checkpoint file opened with the key, and its path for messages. */
export interface OpenedFile {
  readonly path: string
  readonly checkpoint: Checkpoint.Checkpoint
}

/** What `consistency` checks, read before the database is opened. */
export interface ConsistencyRequest {
  readonly older: OpenedFile
  readonly newer: OpenedFile
}

/**
 * `cobro audit consistency` before the database: both notes opened with the key (a bad signature
 * names its file), the older first.
 */
export const consistencyRequest = (options: {
  readonly older: string
  readonly newer: string
  readonly publicKey: Option.Option<string>
}): Effect.Effect<ConsistencyRequest, UserError | Failed | import("effect/ConfigError").ConfigError> =>
  Effect.gen(function* () {
    const olderNote = yield* readText("OLD_CHECKPOINT", options.older)
    const newerNote = yield* readText("NEW_CHECKPOINT", options.newer)
    const key = yield* verifierKeyFrom(options.publicKey)
    const older = yield* open(options.older, olderNote, key)
    const newer = yield* open(options.newer, newerNote, key)
    if (older.size > newer.size) {
      return yield* new UserError({
        message: `${options.older} signs ${older.size} events, more than ${options.newer}'s ${newer.size}: give the older checkpoint first`
      })
    }
    return {
      older: { path: options.older, checkpoint: older },
      newer: { path: options.newer, checkpoint: newer }
    }
  })

/**
 * `cobro audit consistency OLD NEW`: the consistency proof between the two sizes, from the database,
 * checked here against both signed roots (RFC 9162 2.1.4.2): the newer tree extends the older one
 * unchanged.
 */
export const consistency = (request: ConsistencyRequest) =>
  Effect.gen(function* () {
    yield* requireTree
    const older = request.older.checkpoint
    const newer = request.newer.checkpoint
    const size = yield* PgTransparencyLog.treeSize
    if (newer.size > size) {
      return yield* new Failed({
        message: `${request.newer.path} signs ${newer.size} events, past the ${size} in this log's tree now: it is not this log's checkpoint, or the log lost events`
      })
    }
    const ok =
      older.size === newer.size
        ? MerkleTree.equals(older.root, newer.root)
        : older.size === 0
          ? MerkleTree.equals(older.root, MerkleTree.emptyRoot)
          : MerkleTree.verifyConsistency(
              older.size,
              newer.size,
              older.root,
              newer.root,
              (yield* PgTransparencyLog.consistencyProof(older.size, newer.size).pipe(
                Effect.catchTag("SizeOutOfRange", (error) =>
                  Effect.fail(new Failed({ message: error.message }))
                )
              )).hashes
            )
    if (!ok) {
      return yield* new Failed({
        message: `inconsistent: the log at ${newer.size} does not extend the log at ${older.size} unchanged: events ${request.older.path} signed were changed, removed or reordered since`
      })
    }
    yield* Output.line(`consistent: the log at ${newer.size} extends the log at ${older.size} unchanged`)
  })

/**
 * `cobro audit verify --export FILE --checkpoint FILE --public-key FILE`: the export checked against
 * the checkpoint with no database (`OfflineVerify`): the signature, every stream's chain, and the
 * tree hash of the export's first events against the signed root.
 */
export const verifyExport = (options: {
  readonly exportFile: string
  readonly checkpoint: Option.Option<string>
  readonly publicKey: Option.Option<string>
  readonly json: boolean
}) =>
  Effect.gen(function* () {
    if (Option.isNone(options.checkpoint) || Option.isNone(options.publicKey)) {
      return yield* new UserError({
        message:
          "--export needs --checkpoint FILE (a signed checkpoint) and --public-key FILE (the log's key, from cobro audit public-key)"
      })
    }
    if (!Fs.existsSync(options.exportFile)) {
      return yield* new UserError({ message: `--export: no file '${options.exportFile}'` })
    }
    const note = yield* readText("--checkpoint", options.checkpoint.value)
    const key = yield* readVerifierKey(options.publicKey.value)
    const report = yield* OfflineVerify.verifyFile(options.exportFile, note, key).pipe(
      Effect.mapError(
        (error) =>
          new UserError({ message: `--export: cannot read '${options.exportFile}': ${error.message}` })
      )
    )
    const size = report.checkpoint?.size
    if (options.json) {
      yield* Output.line(
        JSON.stringify({
          ok: report.problems.length === 0,
          events: report.events,
          streams: report.streams,
          tree_size: size ?? null,
          root: report.checkpoint === undefined ? null : base64(report.checkpoint.root),
          problems: report.problems.map((problem) => ({
            kind: problem._tag,
            message: OfflineVerify.describe(problem)
          }))
        })
      )
    } else {
      for (const problem of report.problems) yield* Output.line(`BROKEN ${OfflineVerify.describe(problem)}`)
      const streams = `${report.streams} stream${report.streams === 1 ? "" : "s"}`
      yield* Output.line(
        report.problems.length === 0
          ? `OK: ${report.events} events in ${streams}; the chains hold and the first ${size} events hash to the checkpoint's root`
          : `FAILED: ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"} in ${report.events} events of ${streams}`
      )
    }
    if (report.problems.length > 0) {
      return yield* new Failed({ message: "the export does not verify against the checkpoint" })
    }
  })
