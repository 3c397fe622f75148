/**
 * Runs tasks one after another. A Durable Object's input gate opens while it
 * awaits another object (the hub pulling contexts), so without this two turns
 * could read the same ledger and both append.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
