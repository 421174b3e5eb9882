// Makes the conformance runner's result checks strict, in a scratch copy of
// the suite (never in the suite's checkout): as written, an operation whose
// adapter answered with an error passes whenever its `expect` names only
// fields of a successful result (`data`, `upToDate`, …, each checked only on a
// success), or has no `expect` at all (a failed `create` in a setup). Here an
// error answer fails the case unless the operation expects an error (`error:
// true`, which as written is never checked, fails on a success here), an
// `errorCode`, `messageContains`, `errorContains`, `failIndices` (an
// `append-batch` of which some fail), `valid: false`, or a `status` of 400
// or more.
//
// Usage: node strict.mjs <scratch copy>/src/runner.ts
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
const src = readFileSync(file, "utf8");
const written = "async function executeOperation(";
if (src.split(written).length !== 2) {
  console.error(`strict.mjs: ${file} does not define executeOperation once; the runner changed`);
  process.exit(1);
}
const wrapper = `
// Added by tidings' scripts/ds-conformance/strict.mjs.
function expectsFailure(op: any): boolean {
  const e = op?.expect
  if (!e) return false
  return e.error === true || e.errorCode !== undefined || e.messageContains !== undefined || e.failIndices !== undefined ||
    e.errorContains !== undefined || e.valid === false ||
    (typeof e.status === "number" && e.status >= 400)
}
async function executeOperation(op: any, ctx: any): Promise<{ result?: TestResult; error?: string }> {
  const out = await executeOperationAsWritten(op, ctx)
  const r: any = out.result
  if (r && r.success === false && !expectsFailure(op)) {
    return { error: \`strict: \${op.action} answered \${r.errorCode ?? "an error"}\${r.status ? \` (\${r.status})\` : ""}: \${r.message ?? ""}\` }
  }
  if (r && r.success === true && op?.expect?.error === true) {
    return { error: \`strict: \${op.action} succeeded where an error was expected\` }
  }
  return out
}
`;
writeFileSync(file, src.replace(written, "async function executeOperationAsWritten(") + wrapper);
