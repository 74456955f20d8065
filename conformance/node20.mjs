// Node 20 lacks fs.globSync (Node 22), which the suite imports for its tier-check command only.
// This hook hands the suite an fs with a globSync that says so; everything else is Node's own fs.
import { register } from 'node:module';
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  register('data:text/javascript,' + encodeURIComponent(`
    const shim = 'data:text/javascript,' + encodeURIComponent(
      "export * from 'node:fs'; import fs from 'node:fs'; export default fs;" +
      "export function globSync() { throw new Error('fs.globSync needs Node 22'); }");
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
        return { url: shim, shortCircuit: true };
      }
      return next(specifier, context);
    }`));
}
