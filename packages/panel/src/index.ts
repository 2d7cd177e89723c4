/** @cobro/panel: the merchant panel. Import a module by its path, e.g. `@cobro/panel/PanelPage`. */
export {}
