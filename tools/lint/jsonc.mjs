// The comments relab's scenario loader accepts, removed so a plain JSON parser (and so a JSON
// Schema validator) reads the file. The loader parses with nlohmann::json's ignore_comments, which
// treats a comment as whitespace wherever whitespace may stand: `// …` up to the end of the line
// and `/* … */` (an unclosed one is an error). Inside a string nothing is a comment. Each comment is
// replaced by spaces (its newlines kept), so line and column numbers stay those of the file.
//
//   node tools/lint/jsonc.mjs FILE        prints FILE without its comments
import fs from "node:fs";
import { pathToFileURL } from "node:url";

export function stripComments(text) {
  let out = "";
  let i = 0;
  const blank = (s) => s.replace(/[^\n\r]/g, " ");
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      // A string, escapes included, up to its closing quote (or the end: JSON.parse reports it).
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      let j = i;
      while (j < text.length && text[j] !== "\n" && text[j] !== "\r") ++j;
      out += blank(text.slice(i, j));
      i = j;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) throw new SyntaxError("invalid comment; missing closing '*/'");
      out += blank(text.slice(i, end + 2));
      i = end + 2;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// JSON.parse of a scenario file as the loader reads it.
export function parseScenarioText(text) {
  return JSON.parse(stripComments(text));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv.length !== 3) {
    console.error("usage: node tools/lint/jsonc.mjs FILE");
    process.exit(2);
  }
  process.stdout.write(stripComments(fs.readFileSync(process.argv[2], "utf8")));
}
