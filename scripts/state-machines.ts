/**
 * Writes `docs/state-machines.md` from the aggregates' transition tables (`npm run docs:state-machines`):
 * the domain's, then the simulated terminal's, which the domain does not import. A domain test and a
 * terminal-sim test fail when the file and the tables differ.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { renderStateMachinesDoc } from "@cobro/domain/StateMachinesDoc"
import { stateMachine as simTerminal } from "@cobro/terminal-sim/SimTerminal"

const target = join(import.meta.dirname, "..", "docs", "state-machines.md")
writeFileSync(target, renderStateMachinesDoc([simTerminal]))
console.log(`wrote ${target}`)
