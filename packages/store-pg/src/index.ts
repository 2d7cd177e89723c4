/** @cobro/store-pg: not built yet (see the open issues). */
export {}
