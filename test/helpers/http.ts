import { request, type Dispatcher } from 'undici';

export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON answer, read loosely by the tests (see eslint.config.mjs). */
  body: any;
}

/** One HTTP call with a JSON (or raw string) body; parses a JSON answer when there is one. */
export async function call(
  dispatcher: Dispatcher,
  method: Dispatcher.HttpMethod,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const hasBody = body !== undefined;
  const res = await request(url, {
    method,
    dispatcher,
    headers: { ...(hasBody && !headers['content-type'] ? { 'content-type': 'application/json' } : {}), ...headers },
    body: hasBody ? (typeof body === 'string' ? body : JSON.stringify(body)) : undefined,
  });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, body: parsed };
}
