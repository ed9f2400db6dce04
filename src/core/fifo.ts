/**
 * A first-in, first-out queue for the run's state (a step's resumes), made to be shifted often.
 */

/**
 * A FIFO with O(1) shift: an array and a head index, compacted when half is spent. A shifted
 * entry's place is cleared, so the queue does not keep it alive after it has left.
 * @example
 * const resumes = new Fifo<Resume>();
 * resumes.push({ waiter, answer });
 * const next = resumes.shift(); // the oldest, or undefined
 */
export class Fifo<T> {
  items: (T | undefined)[] = [];
  head = 0;
  get size(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    if (this.items.length === 0)
      this.items = [item]; // most queues hold one at a time: no 17-slot first push
    else this.items.push(item);
  }
  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  toArray(): T[] {
    return this.items.slice(this.head) as T[];
  }
}
