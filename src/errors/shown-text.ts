/** Characters of a long name or text a message shows: enough to recognise it. */
export const SHOWN_NAME_LENGTH = 60;

/**
 * The longest quoted part a message shows whole. Paths, examples and expressions a rule quotes run
 * to 100–200 characters and are read whole; past this length a name is pasted by mistake (the
 * did-you-mean bound, too).
 */
export const LONGEST_SHOWN_WHOLE = 256;

/** A size for a person: bytes, KB or MB (of 1024). */
function sizeOf(text: string): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * A name (or any text from the user) as a message shows it: whole up to `LONGEST_SHOWN_WHOLE`
 * characters, else its first `SHOWN_NAME_LENGTH`, an ellipsis and its size (`devices.aaaa… (650 KB)`). A name pasted
 * by mistake can be 650 KB: whole, it made a message of 650 KB in the terminal, the JSON output
 * and the server's log.
 */
export function shownName(name: string): string {
  if (name.length <= LONGEST_SHOWN_WHOLE) return name;
  return `${name.slice(0, SHOWN_NAME_LENGTH)}… (${sizeOf(name)})`;
}

/**
 * A quoted part of a message: in single quotes (not an apostrophe: no letter before the opening
 * one or after the closing one), back quotes, or an expression's `${{ }}`.
 */
const QUOTED = /(?<!\w)'([^'\n]*)'(?!\w)|`([^`\n]*)`|\$\{\{([\s\S]*?)\}\}/g;

/**
 * A message with every quoted name or text in it shown by `shownName`: the one place every
 * problem's message passes through, so no rule has to remember it. Parts that are not quoted
 * (the rule's own words, pointers, lists of known names) are left as written.
 */
export function withShownNames(message: string): string {
  if (message.length <= LONGEST_SHOWN_WHOLE) return message;
  return message.replace(QUOTED, (whole, single?: string, back?: string, expression?: string) => {
    if (single !== undefined) return single.length > LONGEST_SHOWN_WHOLE ? `'${shownName(single)}'` : whole;
    if (back !== undefined) return back.length > LONGEST_SHOWN_WHOLE ? `\`${shownName(back)}\`` : whole;
    const text = expression ?? '';
    return text.length > LONGEST_SHOWN_WHOLE ? `\${{${shownName(text)}}}` : whole;
  });
}
