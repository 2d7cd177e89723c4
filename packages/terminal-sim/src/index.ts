/** @cobro/terminal-sim: not built yet (see the open issues). */
export {}
