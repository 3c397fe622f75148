const encoder = new TextEncoder();

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A context's version: the app's own, else the first 16 hex digits of sha256(content). */
export async function contextVersion(data: { content: string; version?: string | undefined }): Promise<string> {
  return data.version ?? (await sha256Hex(data.content)).slice(0, 16);
}
