/** Preset templates and their rendering (DESIGN §7); pure, importable by Agent provisioning. */
export { isTemplated, parseTemplateString, type Segment, VARIABLE_NAME } from "./placeholders.js"
export { PresetRenderError, type RenderedPreset, renderPreset } from "./render.js"
export { isOfType, PresetLimits, PresetTemplate, PresetVariable, templated, type VariableType, VariableTypes } from "./template.js"
