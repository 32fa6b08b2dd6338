// mocha's spec reporter, plus the closing line that CI reads: "N passed, N failed[, N skipped]".
'use strict';
const Mocha = require('mocha');

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = runner.stats;
      const skipped = pending ? `, ${pending} skipped` : '';
      // after the spec reporter's own epilogue
      process.nextTick(() => console.log(`${passes} passed, ${failures} failed${skipped}`));
    });
  }
}

module.exports = SpecWithSummary;
