// ctest schema_scenarios: every scenario file (scenarios/, recursively) and every scenario example of
// the hand-written docs (README.md and docs/*.md but the generated docs/labs.md and docs/scenarios.md)
// validates against scenarios/schema.json with ajv-cli (JSON Schema draft 2020-12), and every file of
// tools/lint/bad-scenarios/ fails it where its header says.
//
//   node tools/lint/check-scenarios.mjs AJV WORK_DIR
//
// AJV is the installed ajv-cli binary (build/npm/node_modules/.bin/ajv); WORK_DIR a folder this
// script empties and fills with the files as ajv reads them: scenario files keep their // comments,
// which the loader accepts and a JSON parser does not, so each is written there without them
// (jsonc.mjs: the loader's rule). A docs example is a ```json block whose first character is "{":
// a whole scenario file (blocks that start otherwise are fragments, e.g. "expect": {...}). The
// generated pages are left out: they are made from the scenario files and the schema themselves.
// harness/tests/unit/scenario_schema_test.cpp reads the same examples (docs_with_examples() there).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stripComments } from "./jsonc.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const [ajv, work] = process.argv.slice(2);
if (!ajv || !work) {
  console.error("usage: node tools/lint/check-scenarios.mjs AJV WORK_DIR");
  process.exit(2);
}
const schema = path.join(root, "scenarios/schema.json");
let failures = 0;
const fail = (msg) => {
  console.log(`FAIL ${msg}`);
  ++failures;
};

// Every *.json under dir, recursively, as paths relative to dir.
function jsonFiles(dir, rel = "") {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...jsonFiles(dir, r));
    else if (e.isFile() && e.name.endsWith(".json")) out.push(r);
  }
  return out;
}

// Writes `text` without its comments to WORK_DIR/sub/name; checks it is plain JSON then.
function stage(sub, name, text, origin) {
  const dest = path.join(work, sub, name);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  let plain;
  try {
    plain = stripComments(text);
    JSON.parse(plain);
  } catch (e) {
    fail(`${origin}: not JSON once its comments are removed: ${e.message}`);
    return null;
  }
  fs.writeFileSync(dest, plain);
  return dest;
}

// ajv-cli over `files`: { file: {valid, errors} } from its "<file> valid" / "<file> invalid" +
// one JSON line of errors (--errors=line). A strict-mode warning about the schema is a failure.
function validate(files) {
  const args = ["validate", "--spec=draft2020", "--errors=line", "-s", schema];
  for (const f of files) args.push("-d", f);
  const r = spawnSync(ajv, args, { encoding: "utf8" });
  if (r.error) {
    fail(`cannot run ${ajv}: ${r.error.message}`);
    return { status: -1, results: {} };
  }
  const lines = `${r.stdout}\n${r.stderr}`.split("\n");
  const results = {};
  for (let i = 0; i < lines.length; ++i) {
    const m = /^(.*) (valid|invalid)$/.exec(lines[i]);
    if (m && files.includes(m[1])) {
      results[m[1]] = { valid: m[2] === "valid", errors: m[2] === "invalid" ? JSON.parse(lines[i + 1] || "[]") : [] };
      if (m[2] === "invalid") ++i;
    } else if (lines[i].trim()) {
      fail(`ajv: ${lines[i]}`);  // "strict mode: …", "schema … is invalid", anything unexpected
    }
  }
  for (const f of files) if (!(f in results)) fail(`ajv said nothing about ${f}`);
  return { status: r.status, results };
}

fs.rmSync(work, { recursive: true, force: true });

// 1. Every scenario file.
const good = [];
const origin = {};
for (const rel of jsonFiles(path.join(root, "scenarios"))) {
  if (rel === "schema.json") continue;
  const dest = stage("scenarios", rel, fs.readFileSync(path.join(root, "scenarios", rel), "utf8"), `scenarios/${rel}`);
  if (dest) (good.push(dest), (origin[dest] = `scenarios/${rel}`));
}
const scenarioCount = good.length;

// 2. The scenario examples of the hand-written docs.
const generatedDocs = new Set(["labs.md", "scenarios.md"]);
const docs = ["README.md"];
for (const name of fs.readdirSync(path.join(root, "docs")).sort())
  if (name.endsWith(".md") && !generatedDocs.has(name)) docs.push(`docs/${name}`);
let examples = 0;
for (const doc of docs) {
  const lines = fs.readFileSync(path.join(root, doc), "utf8").split("\n");
  for (let i = 0; i < lines.length; ++i) {
    if (lines[i].trim() !== "```json") continue;
    let j = i + 1;
    while (j < lines.length && lines[j].trim() !== "```") ++j;
    const block = lines.slice(i + 1, j).join("\n");
    if (block.trimStart().startsWith("{")) {
      const name = `${doc.replaceAll("/", "_")}-line-${i + 2}.json`;
      const dest = stage("docs", name, block, `${doc} line ${i + 2}`);
      if (dest) (good.push(dest), (origin[dest] = `${doc}, the example at line ${i + 2}`));
      ++examples;
    }
    i = j;
  }
}
if (scenarioCount < 80) fail(`only ${scenarioCount} scenario files found under scenarios/`);
if (examples < 2) fail(`only ${examples} scenario example(s) found in README.md and docs/ (\`\`\`json blocks starting with "{")`);

const ok = validate(good);
for (const f of good) {
  const r = ok.results[f];
  if (r && !r.valid) fail(`${origin[f]} does not validate: ${JSON.stringify(r.errors)}`);
}
if (ok.status !== 0 && Object.values(ok.results).every((r) => r.valid)) fail(`ajv exited ${ok.status} on valid files`);
console.log(`${scenarioCount} scenario files and ${examples} docs examples checked against scenarios/schema.json`);

// 3. Files that must fail, each where its header says: "// schema: INSTANCE_PATH KEYWORD".
const bad = [];
const expected = {};
for (const rel of jsonFiles(path.join(root, "tools/lint/bad-scenarios"))) {
  const text = fs.readFileSync(path.join(root, "tools/lint/bad-scenarios", rel), "utf8");
  const m = /^\/\/ schema: (\S+) (\S+)$/m.exec(text);
  if (!m) {
    fail(`tools/lint/bad-scenarios/${rel}: no "// schema: INSTANCE_PATH KEYWORD" line`);
    continue;
  }
  const dest = stage("bad-scenarios", rel, text, `tools/lint/bad-scenarios/${rel}`);
  if (dest) (bad.push(dest), (expected[dest] = { rel, instancePath: m[1] === "\"\"" ? "" : m[1], keyword: m[2] }));
}
if (bad.length < 2) fail(`only ${bad.length} file(s) in tools/lint/bad-scenarios`);
const ko = validate(bad);
if (bad.length && ko.status === 0) fail("ajv exited 0 on the bad scenarios");
for (const f of bad) {
  const r = ko.results[f];
  const want = expected[f];
  if (!r) continue;
  if (r.valid) fail(`tools/lint/bad-scenarios/${want.rel} validates, but must not`);
  else if (!r.errors.some((e) => e.instancePath === want.instancePath && e.keyword === want.keyword))
    fail(`tools/lint/bad-scenarios/${want.rel} fails, but not with ${want.keyword} at "${want.instancePath}": ${JSON.stringify(r.errors)}`);
  else console.log(`rejected as expected: tools/lint/bad-scenarios/${want.rel} (${want.keyword} at "${want.instancePath}")`);
}

if (failures) {
  console.log(`schema_scenarios: ${failures} failure(s)`);
  process.exit(1);
}
console.log("schema_scenarios: ok");
