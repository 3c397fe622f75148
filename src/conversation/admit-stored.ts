import { admitText } from "../protect";
import type { ResourceStore } from "./resource-store";

/**
 * Session resources pushed before the trust boundary existed were stored as the app sent them; they pass it once,
 * when the conversation migrates, as every resource now does when it is pushed (rendering does not neutralise
 * again, so a redaction marker stays `[REDACTED:rule]`).
 */
export function admitStoredResources(resources: ResourceStore): void {
  const admit = (text: string) => admitText(text).text;
  for (const { sizeChars: _size, ...r } of resources.list()) {
    resources.put({ ...r, title: admit(r.title), content: admit(r.content), ...(r.summary === undefined ? {} : { summary: admit(r.summary) }) });
  }
}
