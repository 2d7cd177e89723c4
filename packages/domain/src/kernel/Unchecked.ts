/**
 * The constructor option of a `Schema.Class` built from values that are checked already: a command
 * from a request that a schema has just decoded, an event from the command it decides on. The
 * append encodes every event with its schema, which checks it again before it is stored; a
 * validating constructor would check the same values once more on the request path
 * (`docs/benchmarks.md`, http: where the time goes).
 */
export const unchecked = { disableValidation: true } as const
