/**
 * A playbook's description as Markdown: `code`, emphasis, lists and links, rendered by
 * markdown-it with raw HTML off (a `<script>` in it stays text) and its own link check (no
 * `javascript:` link). The markup is markdown-it's, every text in it escaped by markdown-it.
 */
import MarkdownIt from 'markdown-it';
import { trusted, type Html } from './html.js';

const markdownIt = new MarkdownIt({ html: false, linkify: false, typographer: false });

export function markdown(text: string | undefined): Html {
  return trusted(text === undefined ? '' : markdownIt.render(text).trim());
}
