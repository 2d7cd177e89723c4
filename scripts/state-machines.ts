/**
 * Writes `docs/state-machines.md` from the aggregates' transition tables (`npm run docs:state-machines`).
 * A domain test fails when the file and the tables differ.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { renderStateMachinesDoc } from "@cobro/domain/StateMachinesDoc"

const target = join(import.meta.dirname, "..", "docs", "state-machines.md")
writeFileSync(target, renderStateMachinesDoc())
console.log(`wrote ${target}`)
