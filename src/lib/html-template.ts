/**
 * A small escaping template for server-rendered pages: `html\`<p>${text}</p>\`` escapes every
 * interpolated value (strings, numbers) unless it is already `SafeHtml` (another template's
 * output, or `trustedHtml()` around markup that came out of the one sanitiser or Roost's own
 * formatter). Arrays are joined; null, undefined and false render nothing. Pure, no DOM.
 */
import { escapeHtml } from './html.ts';

export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | null | undefined | false | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** The template tag: literal parts as written, every value escaped (see the module comment). */
export function html(parts: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = parts[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + parts[i + 1]!;
  return new SafeHtml(out);
}

/** Markup already made safe (sanitised remote HTML, Roost's own rendering): inserted as it is. */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
