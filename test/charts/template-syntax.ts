/**
 * A static check of Go template syntax, for machines without helm: every `{{` has its `}}`
 * (strings and comments inside an action are skipped), and every if/range/with/define/block has
 * its `end`, in order, with `else` only inside if/range/with and `define` only at the top level.
 */

const OPENERS = new Set(['if', 'range', 'with', 'define', 'block']);

interface Action {
  keyword: string;
  line: number;
}

function lineAt(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** The actions of a template, or the first error in reading them. */
function actions(text: string): { actions: Action[]; errors: string[] } {
  const found: Action[] = [];
  let index = 0;
  while (index < text.length) {
    const open = text.indexOf('{{', index);
    const strayClose = text.indexOf('}}', index);
    if (strayClose !== -1 && (open === -1 || strayClose < open)) {
      return { actions: found, errors: [`line ${lineAt(text, strayClose)}: "}}" without "{{"`] };
    }
    if (open === -1) break;
    let cursor = open + 2;
    let body = '';
    let closed = false;
    while (cursor < text.length) {
      const char = text[cursor] as string;
      if (text.startsWith('/*', cursor)) {
        const end = text.indexOf('*/', cursor + 2);
        if (end === -1) return { actions: found, errors: [`line ${lineAt(text, cursor)}: unterminated comment`] };
        cursor = end + 2;
      } else if (char === '"' || char === '`' || char === "'") {
        let end = cursor + 1;
        while (end < text.length && text[end] !== char) end += char !== '`' && text[end] === '\\' ? 2 : 1;
        if (end >= text.length || (char !== '`' && text.slice(cursor, end).includes('\n'))) {
          return { actions: found, errors: [`line ${lineAt(text, cursor)}: unterminated string in an action`] };
        }
        body += text.slice(cursor, end + 1);
        cursor = end + 1;
      } else if (text.startsWith('}}', cursor)) {
        closed = true;
        cursor += 2;
        break;
      } else if (text.startsWith('{{', cursor)) {
        return { actions: found, errors: [`line ${lineAt(text, open)}: "{{" opened inside another action`] };
      } else {
        body += char;
        cursor += 1;
      }
    }
    if (!closed) return { actions: found, errors: [`line ${lineAt(text, open)}: "{{" without "}}"`] };
    const keyword = /^-?\s*([a-z]+)?/.exec(body)?.[1] ?? '';
    found.push({ keyword, line: lineAt(text, open) });
    index = cursor;
  }
  return { actions: found, errors: [] };
}

/** Problems with the template's syntax; empty when it is balanced. */
export function templateSyntaxErrors(text: string): string[] {
  const read = actions(text);
  if (read.errors.length > 0) return read.errors;
  const stack: Action[] = [];
  for (const action of read.actions) {
    if (OPENERS.has(action.keyword)) {
      if (action.keyword === 'define' && stack.length > 0) {
        return [`line ${action.line}: "define" inside "${stack.at(-1)?.keyword}" (line ${stack.at(-1)?.line}); defines must be at the top level`];
      }
      stack.push(action);
    } else if (action.keyword === 'else') {
      const open = stack.at(-1);
      if (!open || !['if', 'range', 'with'].includes(open.keyword)) return [`line ${action.line}: "else" outside if/range/with`];
    } else if (action.keyword === 'end') {
      if (!stack.pop()) return [`line ${action.line}: "end" without an opening if/range/with/define`];
    }
  }
  return stack.map((open) => `line ${open.line}: "${open.keyword}" has no "end"`);
}
