// Run sizes: `npm run bench` (quick, under 5 minutes on 2 cores) and `npm run bench:full`.
export const PROFILES = {
  quick: {
    rounds: 3,
    durationS: 2.5,
    warmupS: 1,
    connections: 16,
    streamLevels: [1000],
    ttfeProbes: 200,
    listRows: 100_000,
    listDurationS: 2,
    coldStarts: 3,
    coldStartsEmbeddedFresh: 2,
  },
  full: {
    rounds: 5,
    durationS: 6,
    warmupS: 2,
    connections: 16,
    streamLevels: [1000, 5000, 10000],
    ttfeProbes: 500,
    listRows: 1_000_000,
    listDurationS: 5,
    coldStarts: 7,
    coldStartsEmbeddedFresh: 5,
  },
};
