/** The platform description: the operations of the platform, read from schemas/openapi/platform.yaml. */
export {
  buildPlatformDescription,
  inputSchemaOf,
  loadPlatformDescription,
  PlatformDescriptionError,
  type AsyncFlavour,
  type HttpMethod,
  type JsonSchema,
  type OperationDescriptor,
  type WriteReads,
  type ParamDescriptor,
  type PlatformDescription,
} from './description.js';
export { readPlatformDocument, writePlatformDocumentJson, type PlatformDocumentFiles } from './platform-document.js';
export { OpenapiErrorCode } from './error-codes.js';
