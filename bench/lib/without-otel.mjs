// Loaded with `--import`: `@opentelemetry/api` cannot be resolved, as in an app that does not install
// it (the telemetry bench's "absent" case, on a machine where the package is installed).
import { register } from 'node:module';

register(
  'data:text/javascript,export async function resolve(specifier, context, next) { if (specifier === "@opentelemetry/api") { const error = new Error("not installed"); error.code = "ERR_MODULE_NOT_FOUND"; throw error; } return next(specifier, context); }',
);
