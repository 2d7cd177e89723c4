/**
 * @cobro/store-pg: the event store, its migrations, hash-chain verification, projections and
 * subscriptions over `@effect/sql`, on PostgreSQL or embedded PGlite.
 */
export * as Export from "./Export.js"
export * as HashChain from "./HashChain.js"
export * as LogNotifications from "./LogNotifications.js"
export * as Migrations from "./Migrations.js"
export * as OfflineVerify from "./OfflineVerify.js"
export * as PgDeliveryQueue from "./PgDeliveryQueue.js"
export * as PgEventStore from "./PgEventStore.js"
export * as PgNotificationLog from "./PgNotificationLog.js"
export * as PgIdempotencyStore from "./PgIdempotencyStore.js"
export * as PgliteClient from "./PgliteClient.js"
export * as PgMerchantDirectory from "./PgMerchantDirectory.js"
export * as PgPool from "./PgPool.js"
export * as PgTransparencyLog from "./PgTransparencyLog.js"
export * as PostgresClient from "./PostgresClient.js"
export * as Projection from "./Projection.js"
export * as ReadModels from "./ReadModels.js"
export * as Subscription from "./Subscription.js"
export * as Checkpoint from "./Checkpoint.js"
export * as MerkleTree from "./MerkleTree.js"
export * as Verify from "./Verify.js"
