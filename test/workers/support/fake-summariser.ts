/**
 * An OpenAI-compatible chat-completions endpoint for the workerd tests (their
 * only outbound fetch). It answers with a summary that names how much it read,
 * or fails when the transcript asks it to, so the fallback can be tested.
 */
export async function fakeSummariser(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.hostname !== "summariser.test") return new Response("no network in tests", { status: 502 });
  if (request.headers.get("Authorization") !== "Bearer summariser-test-key") return new Response("unauthorized", { status: 401 });
  const body = (await request.json()) as { model: string; messages: { role: string; content: string }[] };
  const transcript = body.messages.at(-1)?.content ?? "";
  if (transcript.includes("PLEASE FAIL")) return new Response("upstream overloaded", { status: 503 });
  const seqs = [...transcript.matchAll(/^#(\d+) /gm)].map((m) => Number(m[1]));
  const content = `Model summary by ${body.model} of messages #${Math.min(...seqs)}–#${Math.max(...seqs)}.`;
  return Response.json({ choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] });
}
