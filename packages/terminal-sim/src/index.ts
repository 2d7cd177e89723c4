/**
 * @cobro/terminal-sim: simulated Smart and Smart Pro terminals behind the domain's `TerminalGateway`
 * and `TerminalSandbox` ports (spec A, R1–R7). `Simulator.layer` provides both.
 */
export * as CardData from "./CardData.js"
export * as SimTerminal from "./SimTerminal.js"
export * as Simulator from "./Simulator.js"
