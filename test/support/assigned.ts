/**
 * A suite's `let server: TestServer;` reads as set, but it is not until its `beforeAll` assigns it, and
 * when that `beforeAll` fails part way Jest still runs the `afterAll`. Read through `ifAssigned`, the
 * variable is typed as it is there, so the teardown closes what was set up and skips the rest instead of
 * failing on the first one missing: `await ifAssigned(server)?.close();`.
 */
export function ifAssigned<T>(value: T): T | undefined {
  return value;
}
