/** What each app socket carries through hibernation (ids only; data lives in SQLite). */
export interface SocketSession {
  app: string;
  sessionId: string;
  /** When this socket last sent `initialize`, or null before; calls go to the app's latest. */
  initializedAt: number | null;
}

export function sessionOf(ws: WebSocket): SocketSession | null {
  return (ws.deserializeAttachment() as SocketSession | null) ?? null;
}

export function saveSession(ws: WebSocket, session: SocketSession): void {
  ws.serializeAttachment(session);
}
