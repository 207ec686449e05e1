import semver from 'semver';

/**
 * Which Node.js the project declares, builds on and tests on: package.json `engines.node`, `.nvmrc`
 * (the developers' and the image's major), the Dockerfile's base images, the README's quick-start line,
 * and the `engines` every installed package declares.
 */
export interface RuntimeFiles {
  /** package.json `engines.node`. */
  engines: string;
  /** `.nvmrc`. */
  nvmrc: string;
  dockerfile: string;
  readme: string;
  /** package-lock.json `packages`. */
  lockPackages: Record<string, { engines?: unknown }>;
}

/** The lowest version of each `||` alternative of a range: the Node versions the project says it starts at. */
export function engineFloors(range: string): string[] {
  return range.split('||').map((clause) => {
    const floor = semver.minVersion(clause.trim());
    if (!floor) throw new Error(`engines.node alternative "${clause.trim()}" has no lowest version`);
    return floor.version;
  });
}

function packageName(lockPath: string): string {
  return lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/**
 * What disagrees. `overDeclared` names packages whose `engines` asks for more than the project's oldest
 * supported major (with the range they declare, so a change to it is reviewed): they are let through on
 * that major only, where the suite runs in CI and proves the project's use of them works.
 */
export function runtimeViolations(files: RuntimeFiles, overDeclared: Record<string, string>): string[] {
  const violations: string[] = [];
  const floors = engineFloors(files.engines);
  const oldestMajor = Math.min(...floors.map((v) => semver.major(v)));

  const nvmrc = files.nvmrc.trim();
  if (!/^\d+$/.test(nvmrc)) violations.push(`.nvmrc must name a major version, got "${nvmrc}"`);
  else if (!semver.intersects(files.engines, `^${nvmrc}.0.0`)) {
    violations.push(`.nvmrc names Node ${nvmrc}, outside engines.node "${files.engines}"`);
  }

  const images = [...files.dockerfile.matchAll(/^FROM\s+(\S+)/gim)].map((m) => m[1]);
  if (images.length === 0) violations.push('Dockerfile has no FROM');
  for (const image of images) {
    if (!image.startsWith(`node:${nvmrc}-`)) violations.push(`Dockerfile FROM ${image}: not node:${nvmrc}-* (.nvmrc)`);
  }

  const quickStart = files.readme.split('\n').find((line) => line.includes('On a fresh machine with Node.js'));
  if (!quickStart) violations.push('README has no "On a fresh machine with Node.js" line');
  else {
    for (const floor of floors) {
      const shown = `${semver.major(floor)}.${semver.minor(floor)}+`;
      if (!quickStart.includes(shown)) violations.push(`README quick start does not say ${shown} (engines.node)`);
    }
  }

  const clauses = files.engines.split('||').map((clause) => clause.trim());
  const excused = new Set<string>();
  for (const [path, entry] of Object.entries(files.lockPackages)) {
    const declared = entry.engines && (entry.engines as { node?: unknown }).node;
    if (!path || typeof declared !== 'string' || !semver.validRange(declared)) continue;
    const name = packageName(path);
    for (const clause of clauses) {
      if (semver.subset(clause, declared)) continue;
      if (overDeclared[name] === declared && semver.subset(clause, `^${oldestMajor}.0.0`)) {
        excused.add(name);
        continue;
      }
      violations.push(`${name} declares node "${declared}", engines.node lets in "${clause}"`);
    }
  }
  for (const name of Object.keys(overDeclared)) {
    if (!excused.has(name)) violations.push(`${name} is listed as over-declaring but needs no excuse any more`);
  }
  return violations;
}
