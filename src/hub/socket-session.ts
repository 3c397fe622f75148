/** What each app socket carries through hibernation (ids only; data lives in SQLite). */
export interface SocketSession {
  app: string;
  sessionId: string;
  /** When this socket last sent `initialize`, or null before; calls go to the app's latest. */
  initializedAt: number | null;
  /** The app answers `contexts/currentMany` (its `initialize` said so): its providers are asked together. */
  currentMany?: boolean;
}

/**
 * Each socket's session as last saved, while the object is awake: every frame and every call to an app reads it, and
 * deserializing the attachment each time costs more than the rest of an answer. After hibernation it is read back once.
 */
const sessions = new WeakMap<WebSocket, SocketSession | null>();

export function sessionOf(ws: WebSocket): SocketSession | null {
  let session = sessions.get(ws);
  if (session === undefined) {
    session = (ws.deserializeAttachment() as SocketSession | null) ?? null;
    sessions.set(ws, session);
  }
  return session;
}

export function saveSession(ws: WebSocket, session: SocketSession): void {
  ws.serializeAttachment(session);
  sessions.set(ws, session);
}
