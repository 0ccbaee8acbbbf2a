import { Ajv } from 'ajv';

/**
 * Ajv that reads a CRD's openAPIV3Schema the way the API server decodes it: strict, so a keyword it
 * does not know (a typo, or a stray key such as the `for display.` that an unquoted comma once
 * made) is an error at compile time instead of being silently ignored. It knows JSON Schema plus
 * Kubernetes' x-kubernetes-* extensions, each checked against the values Kubernetes accepts, and
 * nothing else: a keyword Kubernetes' JSONSchemaProps lacks must fail here as it fails there.
 */
const KUBERNETES_EXTENSIONS: Record<string, object> = {
  // Structural schemas allow only `true` here; Kubernetes rejects `false`.
  'x-kubernetes-preserve-unknown-fields': { const: true },
  'x-kubernetes-embedded-resource': { type: 'boolean' },
  'x-kubernetes-int-or-string': { type: 'boolean' },
  'x-kubernetes-list-type': { enum: ['atomic', 'set', 'map'] },
  'x-kubernetes-list-map-keys': { type: 'array', minItems: 1, items: { type: 'string' } },
  'x-kubernetes-map-type': { enum: ['granular', 'atomic'] },
  'x-kubernetes-validations': {
    type: 'array',
    items: {
      type: 'object',
      required: ['rule'],
      additionalProperties: false,
      properties: {
        rule: { type: 'string', minLength: 1 },
        message: { type: 'string' },
        messageExpression: { type: 'string' },
        reason: { enum: ['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate'] },
        fieldPath: { type: 'string' },
        optionalOldSelf: { type: 'boolean' },
      },
    },
  },
};

/** Defaults are filled in, as the API server persists them. */
export function crdAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true });
  for (const [keyword, metaSchema] of Object.entries(KUBERNETES_EXTENSIONS)) ajv.addKeyword({ keyword, metaSchema });
  // The formats the CRDs use, as Kubernetes validates them.
  ajv.addFormat('int64', true);
  ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
  return ajv;
}
