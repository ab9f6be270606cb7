// A differentially private mean of records in the public box [-15, 15]^d (blobs-2d's), audited through dpaudit's
// protocol for programs (docs/executables.md): JSON lines on stdin and stdout.  Each coordinate of the mean of the
// clipped records gets Laplace noise of scale d (HI - LO) / (n epsilon): the L1 sensitivity of the mean when one
// record is replaced, so it is epsilon-DP under --neighbours replace.  With --broken the sensitivity forgets the
// factor d (HI - LO) = 60: far too little noise.
//
//   dpaudit estimate-eps -m "cmd:node examples/executables/dp_mean.js" --eps 1 --neighbours replace            # consistent
//   dpaudit estimate-eps -m "cmd:node examples/executables/dp_mean.js --broken" --eps 1 --neighbours replace   # VIOLATION
"use strict";
const readline = require("readline");

const LO = -15, HI = 15;
const broken = process.argv.includes("--broken");

function generator(seed) { // mulberry32 on a mix of the seed's two 32-bit halves: uniform numbers in (0, 1)
  let a = ((seed % 2 ** 32) ^ Math.imul(Math.floor(seed / 2 ** 32), 0x9e3779b9)) | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 2 ** 32;
  };
}

console.log(JSON.stringify({ protocol: "dpaudit/1", output: "vector", name: broken ? "dp_mean_broken" : "dp_mean" }));
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const { epsilon, seeds, n, d, data } = JSON.parse(line);
  const records = Math.max(n, 1);
  const mean = new Array(d).fill(0);
  for (const row of data) row.forEach((x, j) => { mean[j] += Math.min(Math.max(x, LO), HI) / records; });
  const sensitivity = broken ? 1 / records : (d * (HI - LO)) / records;
  const releases = seeds.map((seed) => {
    const uniform = generator(seed);
    return mean.map((m) => m + (sensitivity / epsilon) * Math.log(uniform() / uniform()));
  });
  console.log(JSON.stringify({ releases }));
});
