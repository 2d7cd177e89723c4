/**
 * The auditor's commands (issue 7, "Auditing"): a resource's history and its state at an instant,
 * folded with its aggregate's own `evolve`; the log's verification; the read models rebuilt; the
 * log exported. All of them read the log directly.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as Histories from "@cobro/domain/Histories"
import * as Export from "@cobro/store-pg/Export"
import * as Projection from "@cobro/store-pg/Projection"
import * as Verify from "@cobro/store-pg/Verify"
import * as SimTerminal from "@cobro/terminal-sim/SimTerminal"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Store from "../Store.js"
import { Failed, UserError } from "./CliError.js"
import * as Instant from "./Instant.js"
import * as Output from "./Output.js"
import * as Progress from "./Progress.js"

/**
 * The resources the command line knows: the domain's, and the simulator's terminals (`MER_…/<serial>`
 * for a serial's sandbox device, `MER_…:live/<serial>` for its production device).
 */
export const catalog = Histories.make([
  ...Histories.domainEntries,
  Histories.entry(SimTerminal.SimTerminal, "simulated terminal", (id) =>
    /^MER_[A-Za-z0-9]+(:live)?\/./.test(id)
  )
])

const describeIds =
  "a resource id (MER_…, LNK_…, INT_…, TRX_…, RFD_…, a notification's UUID, MER_…:test:<reference_id> for an intent, " +
  "MER_…/<serial> or MER_…:live/<serial> for a simulated terminal's sandbox or production device, USR_… for a panel user) " +
  "or a stream id (PaymentLink-LNK_…)"

/** The stream an id names, and its events (optionally only those recorded up to `asOf`). */
const load = (id: string, asOf?: Date) =>
  Effect.gen(function* () {
    const resolved = Histories.resolve(catalog, id)
    if (Option.isNone(resolved)) {
      return yield* new UserError({ message: `'${id}' names no resource: give ${describeIds}` })
    }
    const store = yield* EventStore.EventStore
    const all = yield* store.readStream(resolved.value.streamId)
    if (all.length === 0) {
      return yield* new UserError({
        message: `no ${resolved.value.entry.resource} '${id}' in the log (stream ${resolved.value.streamId} is empty)`
      })
    }
    const events = asOf === undefined ? all : all.filter((e) => e.recordedAt.getTime() <= asOf.getTime())
    return { ...resolved.value, events, first: all[0]! }
  })

const replayed = (aggregate: Histories.AnyAggregate, events: ReadonlyArray<EventStore.RecordedEvent>) =>
  Either.match(Histories.replay(aggregate, events), {
    onLeft: (error) =>
      Effect.fail(
        new Failed({
          message:
            `event ${error.streamVersion} (${error.type}) of ${error.streamId} does not decode as a ` +
            `${aggregate.name} event of this version of Cobro:\n${error.message}`
        })
      ),
    onRight: Effect.succeed
  })

const actorOf = (event: EventStore.RecordedEvent) => event.metadata.actor ?? "-"

/** The fields of `after` that differ from `before`, as `name=value` (the state column of the table). */
const changes = (before: unknown, after: unknown): string => {
  const b = (Histories.redact(Histories.toJson(before)) ?? {}) as Record<string, unknown>
  const a = (Histories.redact(Histories.toJson(after)) ?? {}) as Record<string, unknown>
  const changed = Object.keys(a)
    .filter((key) => key !== "_tag" && JSON.stringify(a[key]) !== JSON.stringify(b[key]))
    .map((key) => `${key}=${Output.truncate(JSON.stringify(a[key]), 40)}`)
  return Output.truncate([String(a["_tag"]), ...changed].join(" "), 160)
}

/** `cobro audit history <id>`: each event with its time, type, actor and the state after it. */
export const history = (id: string, options: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const { entry, events, streamId } = yield* load(id)
    const steps = yield* replayed(entry.aggregate, events)
    if (options.json) {
      for (const step of steps) {
        yield* Output.line(
          JSON.stringify({
            streamId,
            version: step.recorded.streamVersion,
            position: step.recorded.globalPosition.toString(),
            time: step.recorded.recordedAt.toISOString(),
            type: step.recorded.type,
            actor: step.recorded.metadata.actor ?? null,
            metadata: step.recorded.metadata,
            data: Histories.redact(step.recorded.data),
            state: Histories.redact(Histories.toJson(step.state))
          })
        )
      }
      return
    }
    let before: unknown = entry.aggregate.initialState
    const rows = steps.map((step) => {
      const row = [
        String(step.recorded.streamVersion),
        step.recorded.recordedAt.toISOString(),
        step.recorded.type,
        actorOf(step.recorded),
        changes(before, step.state)
      ]
      before = step.state
      return row
    })
    yield* Output.line(`${streamId} (${entry.resource}): ${steps.length} events`)
    yield* Output.line(
      Output.table(["VERSION", "TIME", "TYPE", "ACTOR", "STATE AFTER (changed fields)"], rows)
    )
  })

/** Parses an instant option, or fails with the reason. */
export const instant = (name: string, text: string) =>
  Either.match(Instant.parse(text), {
    onLeft: (reason) => Effect.fail(new UserError({ message: `--${name}: ${reason}` })),
    onRight: Effect.succeed
  })

/** `cobro audit state <id> --at <instant>`: the state folded from the events recorded up to the instant. */
export const stateAt = (id: string, at: string, options: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const asOf = yield* instant("at", at)
    const { entry, events, first, streamId } = yield* load(id, asOf)
    const steps = yield* replayed(entry.aggregate, events)
    const last = steps[steps.length - 1]
    const state = Histories.redact(
      Histories.toJson(last === undefined ? entry.aggregate.initialState : last.state)
    )
    const report = {
      streamId,
      at: asOf.toISOString(),
      version: last?.recorded.streamVersion ?? 0,
      lastEvent:
        last === undefined
          ? null
          : { type: last.recorded.type, time: last.recorded.recordedAt.toISOString() },
      state
    }
    if (options.json) return yield* Output.line(JSON.stringify(report))
    yield* Output.line(
      last === undefined
        ? `${streamId} at ${report.at}: did not exist yet (its first event, ${first.type}, was recorded at ${first.recordedAt.toISOString()})`
        : `${streamId} at ${report.at}: version ${report.version}, after ${last.recorded.type} recorded at ${last.recorded.recordedAt.toISOString()}`
    )
    yield* Output.line(JSON.stringify(state, null, 2))
  })

/** A break of the chain in one sentence that names the stream and the version. */
export const describeBreak = (found: Verify.ChainBreak): string => {
  switch (found._tag) {
    case "MissingEvent":
      return `${found.streamId} version ${found.expectedVersion}: missing (the next event found is version ${found.foundVersion}, position ${found.globalPosition})`
    case "BrokenLink":
      return `${found.streamId} version ${found.streamVersion}: prev_hash is not the hash of version ${found.streamVersion - 1} (position ${found.globalPosition})`
    case "AlteredEvent":
      return `${found.streamId} version ${found.streamVersion}: altered (its content does not hash to its stored hash; position ${found.globalPosition})`
    case "HeadMismatch":
      return found.lastVersion < found.headVersion
        ? `${found.streamId} version ${found.lastVersion + 1}: missing (the stream's head is at version ${found.headVersion}, the last event found is version ${found.lastVersion})`
        : `${found.streamId} version ${found.headVersion}: the stream's head (version ${found.headVersion}) disagrees with its last event (version ${found.lastVersion})`
  }
}

/** The first version a break names (for the JSON report). */
const versionOf = (found: Verify.ChainBreak): number => {
  switch (found._tag) {
    case "MissingEvent":
      return found.expectedVersion
    case "HeadMismatch":
      return found.lastVersion < found.headVersion ? found.lastVersion + 1 : found.headVersion
    default:
      return found.streamVersion
  }
}

const describeCheckpoint = (found: Verify.CheckpointBreak): string =>
  `checkpoint ${found.name}: names position ${found.globalPosition} (transaction ${found.transactionId}), which is not in the log`

/** `cobro audit verify`: hash chains, version sequences, heads and checkpoints; non-zero exit when broken. */
export const verify = (options: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const total = yield* Verify.countEvents
    const progress = yield* Progress.start("verify", total)
    const report = yield* Verify.verifyWith({ onProgress: (p) => progress.update(p.events) })
    yield* progress.finish
    const problems = report.breaks.length + report.checkpoints.length
    if (options.json) {
      yield* Output.line(
        JSON.stringify({
          ok: problems === 0,
          streams: report.streams,
          events: report.events,
          breaks: report.breaks.map((b) => ({
            kind: b._tag,
            streamId: b.streamId,
            version: versionOf(b),
            message: describeBreak(b)
          })),
          checkpoints: report.checkpoints.map((c) => ({
            kind: c._tag,
            name: c.name,
            globalPosition: c.globalPosition.toString(),
            message: describeCheckpoint(c)
          }))
        })
      )
    } else {
      for (const found of report.breaks) yield* Output.line(`BROKEN ${describeBreak(found)}`)
      for (const found of report.checkpoints) yield* Output.line(`BROKEN ${describeCheckpoint(found)}`)
      yield* Output.line(
        problems === 0
          ? `OK: ${report.events} events in ${report.streams} stream${report.streams === 1 ? "" : "s"}; every hash chain, version sequence and checkpoint holds`
          : `FAILED: ${report.breaks.length} broken streams and ${report.checkpoints.length} broken checkpoints in ${report.events} events of ${report.streams} streams`
      )
    }
    if (problems > 0) return yield* new Failed({ message: "the log does not verify" })
  })

/**
 * `cobro audit rebuild [projection…]`: rebuilds the read models named (all by default) from the log
 * beside a running server (`Projection.rebuildAll`): replayed into shadow tables in short
 * transactions, then swapped in, so requests and the log's consumers never wait for it.
 */
export const rebuild = (names: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const known = Store.projections
    const unknown = names.filter((name) => !known.some((p) => p.name === name))
    if (unknown.length > 0) {
      return yield* new UserError({
        message: `no read model named ${unknown.map((n) => `'${n}'`).join(", ")}; the read models are: ${known.map((p) => p.name).join(", ")}`
      })
    }
    const chosen = names.length === 0 ? known : known.filter((p) => names.includes(p.name))
    const total = yield* Verify.countEvents
    const progress = yield* Progress.start("rebuild", total)
    const replayedCount = yield* Projection.rebuildAll(chosen, {
      onProgress: (p) => progress.update(p.events)
    })
    yield* progress.finish
    yield* Output.line(`rebuilt ${chosen.map((p) => p.name).join(", ")} from ${replayedCount} events`)
  })

/** `cobro audit export [--since] [--until]`: the log as JSON lines in commit order, a page at a time. */
export const exportLog = (options: {
  readonly since: Option.Option<string>
  readonly until: Option.Option<string>
}) =>
  Effect.gen(function* () {
    const since = Option.isSome(options.since) ? yield* instant("since", options.since.value) : undefined
    const until = Option.isSome(options.until) ? yield* instant("until", options.until.value) : undefined
    if (since !== undefined && until !== undefined && until.getTime() < since.getTime()) {
      return yield* new UserError({ message: "--until is before --since" })
    }
    // One write per page: a line each would cost a syscall each.
    yield* Stream.runForEachChunk(Export.events({ since, until }), (chunk) => {
      let text = ""
      for (const event of chunk) text += `${Export.toLine(event)}\n`
      return text === "" ? Effect.void : Output.write(text)
    })
  })

/** What every audit command needs. */
export type Requirements = SqlClient.SqlClient | EventStore.EventStore
