export { inferPartType, inferTemplateType, fieldMisses, type TemplateMiss } from './template.js';
export { TYPED_FUNCTIONS } from './builtins.js';
export type { InferScope, RootType } from './values.js';
