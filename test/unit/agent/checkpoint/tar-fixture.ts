/** Builds small tar archives with tar-stream for the checkpoint tests. */
import { pack } from 'tar-stream';

export async function tarOf(files: Record<string, string>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const ended = new Promise<void>((r) => p.on('end', () => r()));
  for (const [name, data] of Object.entries(files)) p.entry({ name }, data);
  p.finalize();
  await ended;
  return Buffer.concat(chunks);
}
