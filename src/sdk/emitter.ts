/** A tiny typed event emitter: no Node `EventEmitter`, so it runs in browsers too. */
export class Emitter<Events extends object> {
  private readonly handlers = new Map<keyof Events, Set<(payload: never) => void>>();

  /** Subscribes `handler` to `event`; call the returned function to unsubscribe. */
  on<K extends keyof Events>(event: K, handler: (payload: Events[K]) => void): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /** Whether anything listens for `event`. */
  has(event: keyof Events): boolean {
    return (this.handlers.get(event)?.size ?? 0) > 0;
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    // Copy first, so a handler that unsubscribes does not skip its neighbours.
    for (const handler of [...(this.handlers.get(event) ?? [])]) {
      try {
        (handler as (payload: Events[K]) => void)(payload);
      } catch (error) {
        // A faulty handler must not break the caller's state machine; surface it as an uncaught error instead.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
