import { html, type SafeHtml } from './html.ts';

/**
 * Form controls with their label, hint and error in one place: every control is labelled, and an
 * error sits right under its field, tied to it by aria-describedby and marked aria-invalid.
 */
export type FieldErrors = Record<string, string>;

interface FieldOptions {
  label: string;
  name: string;
  errors?: FieldErrors;
  hint?: string;
  required?: boolean;
}

function describedBy(id: string, hint: string | undefined, error: string | undefined): SafeHtml {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`${ids && html` aria-describedby="${ids}"`}${error && html` aria-invalid="true"`}`;
}

function notes(id: string, hint: string | undefined, error: string | undefined): SafeHtml {
  return html`${hint && html`<p class="hint" id="${id}-hint">${hint}</p>`}${error && html`<p class="error" id="${id}-error">${error}</p>`}`;
}

/**
 * A control that applies only to some choices of a select (imageQuality to jpeg and webp): the
 * dashboard's script disables it for the other choices, so it is not sent. Without the script the
 * server's 400 says why, next to the field.
 */
export interface DependsOn {
  name: string;
  values: readonly string[];
}

function dependsOnAttributes(dependsOn: DependsOn | undefined): SafeHtml {
  return html`${dependsOn && html` data-enabled-by="field-${dependsOn.name}" data-enabled-for="${dependsOn.values.join(' ')}"`}`;
}

export function textField(options: FieldOptions & { value?: string; type?: string; autocomplete?: string; multiline?: boolean; dependsOn?: DependsOn }): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.errors?.[options.name];
  const common = html`id="${id}" name="${options.name}"${options.required && html` required`}${describedBy(id, options.hint, error)}${dependsOnAttributes(options.dependsOn)}`;
  const control = options.multiline
    ? html`<textarea ${common} rows="4">${options.value ?? ''}</textarea>`
    : html`<input ${common} type="${options.type ?? 'text'}" value="${options.value ?? ''}"${options.autocomplete && html` autocomplete="${options.autocomplete}"`}>`;
  return html`<div class="field${error && ' has-error'}"><label for="${id}">${options.label}</label>${control}${notes(id, options.hint, error)}</div>`;
}

export function selectField(options: FieldOptions & { value?: string; choices: { value: string; label: string }[]; dependsOn?: DependsOn }): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.errors?.[options.name];
  return html`<div class="field${error && ' has-error'}"><label for="${id}">${options.label}</label>
    <select id="${id}" name="${options.name}"${describedBy(id, options.hint, error)}${dependsOnAttributes(options.dependsOn)}>
      ${options.choices.map((choice) => html`<option value="${choice.value}"${choice.value === options.value && html` selected`}>${choice.label}</option>`)}
    </select>${notes(id, options.hint, error)}</div>`;
}

export function checkboxField(options: FieldOptions & { checked?: boolean; dependsOn?: DependsOn }): SafeHtml {
  const id = `field-${options.name}`;
  const error = options.errors?.[options.name];
  return html`<div class="field checkbox${error && ' has-error'}">
    <input type="checkbox" id="${id}" name="${options.name}" value="on"${options.checked && html` checked`}${describedBy(id, options.hint, error)}${dependsOnAttributes(options.dependsOn)}>
    <label for="${id}">${options.label}</label>${notes(id, options.hint, error)}</div>`;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** An error that belongs to no single field, shown above the form. */
export function formError(errors: FieldErrors): SafeHtml {
  return html`${errors.form && html`<p class="error form-error" role="alert">${errors.form}</p>`}`;
}

/**
 * Which field a management API message is about: its messages start with the field's name
 * (ajv's "name must …", the domain check's "allowedDomains: …"). Anything else is the form's.
 */
export function errorsFor(message: string, fields: Record<string, RegExp>): FieldErrors {
  const errors: FieldErrors = {};
  // The validator joins its messages with "; ", one per problem.
  for (const part of message.split('; ')) {
    const field = Object.entries(fields).find(([, pattern]) => pattern.test(part))?.[0] ?? 'form';
    errors[field] = errors[field] ? `${errors[field]}; ${part}` : part;
  }
  return errors;
}
