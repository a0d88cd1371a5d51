/**
 * Splits a byte stream of concatenated JSON documents (a watch body, spec 6.1) into whole
 * documents. The server writes one document per line, but chunk boundaries fall anywhere and
 * other servers omit the newline, so documents are found by tracking nesting depth outside
 * strings rather than by splitting on newlines.
 */
export class JsonDocumentSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  private buf = '';
  /** Scan position inside buf, so a long document arriving in many chunks is scanned once. */
  private pos = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;

  /** Feeds one chunk; returns the documents it completed (as JSON text), in order. Throws on bytes that cannot start a document. */
  push(chunk: Uint8Array | string): string[] {
    this.buf += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: string[] = [];
    const s = this.buf;
    for (let i = this.pos; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c /* \ */) this.escaped = true;
        else if (c === 0x22 /* " */) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
        if (c !== 0x7b /* { */) throw new Error(`malformed watch stream: unexpected ${JSON.stringify(s[i])} between documents`);
        this.start = i;
        this.depth = 1;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0) {
          out.push(s.slice(this.start, i + 1));
          this.start = -1;
        }
      }
    }
    // Keep only the unfinished document (if any).
    if (this.start >= 0) {
      this.buf = s.slice(this.start);
      this.pos = s.length - this.start;
      this.start = 0;
    } else {
      this.buf = '';
      this.pos = 0;
    }
    return out;
  }

  /** True when a document has started but not finished (the stream was cut mid-document). */
  get pending(): boolean {
    return this.depth > 0;
  }
}
