/** @cobro/server: not built yet (see the open issues). */
export {}
