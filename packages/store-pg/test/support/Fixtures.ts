/**
 * Fresh names for tests that share one database (a suite's tests, and the suites of one file, share
 * its log): stream ids, events and ids that no other test uses.
 */
import * as EventStore from "@cobro/domain/EventStore"
import * as IdGenerator from "@cobro/domain/IdGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

let counter = 0
/** A stream id no other test uses. */
export const streamId = (prefix = "test") => `${prefix}-${++counter}-${randomUUID().slice(0, 8)}`

/** A new event with a fresh id. */
export const event = (
  type: string,
  data: unknown = {},
  metadata: EventStore.EventMetadata = {}
): EventStore.NewEvent => ({
  eventId: randomUUID(),
  type,
  schemaVersion: 1,
  data,
  metadata
})

/** A new event whose data is tagged with its type, as the domain's are, recorded by the actor `test`. */
export const taggedEvent = (type: string, data: Record<string, unknown> = {}): EventStore.NewEvent =>
  event(type, { _tag: type, ...data }, { actor: "test" })

/** Random ids for the domain's commands: sequential ones would collide in a shared database. */
export const randomIds: Layer.Layer<IdGenerator.IdGenerator> = Layer.succeed(IdGenerator.IdGenerator, {
  next: (prefix) => Effect.sync(() => `${prefix}${randomUUID().replaceAll("-", "")}`),
  uuid: Effect.sync(() => randomUUID())
})
