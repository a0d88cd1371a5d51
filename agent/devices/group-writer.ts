/**
 * Serialises writes of a state file and shares them: a write requested while one runs waits for
 * it and then one follow-up write serves every request made meanwhile (group commit). Each write
 * takes the state as it is when the write starts, so a caller's change is on disk when its promise
 * resolves. Used for the device checkpoint, where concurrent admissions would otherwise each pay
 * a full fsync'd rewrite.
 */
export class GroupWriter {
  private writing: Promise<void> | undefined;
  private again: Promise<void> | undefined;

  /** `write` never rejects (it logs its own failures). */
  constructor(private readonly write: () => Promise<void>) {}

  /** Resolves once a write that started after this call has finished. */
  request(): Promise<void> {
    if (this.again) return this.again;
    if (this.writing) {
      this.again = this.writing.then(() => {
        this.again = undefined;
        return this.request();
      });
      return this.again;
    }
    this.writing = this.write().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  /** Resolves once no write is running or queued (as of the call). */
  async idle(): Promise<void> {
    await (this.again ?? this.writing);
  }
}
