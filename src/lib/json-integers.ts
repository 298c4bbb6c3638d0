/**
 * JSON text with exact 64-bit integers. Mastodon sends a few ids as JSON integers
 * (a grouped notification's `most_recent_notification_id`, a scheduled status's
 * `params.application_id`); Roost's ids are 64-bit snowflakes, beyond what a JavaScript number
 * holds exactly. A serializer gives those fields as a `bigint`, and this writes its digits
 * unrounded. JSON.stringify refuses a bigint, so plain documents pay nothing: `stringifyJson`
 * takes this path only when the plain one threw.
 */

const MARK = `\u0001roost-int-${Math.random().toString(36).slice(2)}:`;
const MARKED = new RegExp(`"${MARK.replace('\u0001', '\\\\u0001')}(-?\\d+)"`, 'g');

function withIntegers(data: unknown): string {
  const text = JSON.stringify(data, (_key, value: unknown) => (typeof value === 'bigint' ? `${MARK}${value.toString()}` : value)) ?? 'null';
  return text.replace(MARKED, '$1');
}

/** JSON.stringify, with every bigint written as a JSON integer of its exact digits. */
export function stringifyJson(data: unknown): string {
  try {
    return JSON.stringify(data) ?? 'null';
  } catch (err) {
    if (err instanceof TypeError && /BigInt/i.test(err.message)) return withIntegers(data);
    throw err;
  }
}
