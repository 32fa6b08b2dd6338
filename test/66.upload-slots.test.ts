// The upload slots that keep a burst of uploads from starving GETs of the event loop.
import { expect } from 'chai';
import { UploadSlots } from '../lib/http/upload-slots.js';
import { sleep } from './helpers/until.js';

const tick = (ms = 5) => sleep(ms);

describe('upload slots', () => {
  it('lets `slots` uploads parse at once; the others wait their turn, in order', async () => {
    const slots = new UploadSlots(2, 10_000);
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const take = (n: number) =>
      slots.acquire().then((release) => {
        order.push(n);
        releases.push(release);
      });
    void take(1);
    void take(2);
    void take(3);
    void take(4);
    await tick();
    expect(order).to.deep.equal([1, 2]);
    releases[0]();
    releases[0](); // twice: frees one slot only
    await tick();
    expect(order).to.deep.equal([1, 2, 3]);
    releases[1]();
    await tick();
    expect(order).to.deep.equal([1, 2, 3, 4]);
  });

  it('an upload that holds its slot too long (slow link, long video) gives it up', async () => {
    const slots = new UploadSlots(1, 30);
    await slots.acquire(); // never released by its holder
    const started = Date.now();
    await slots.acquire();
    expect(Date.now() - started).to.be.within(20, 1000);
  });
});
