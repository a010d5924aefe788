// sharp (libvips), loaded on first use and set up for a daemon that sees a picture now and then:
// libvips's operation cache (by default up to 50 MB of decoded pictures, kept for reuse) is off,
// and one thread does the work instead of one per core, so a picture leaves no native memory
// behind for the next one that may come hours later; it takes a few milliseconds longer.
type Sharp = typeof import("sharp").default;

let loaded: Promise<Sharp> | undefined;

export function loadSharp(): Promise<Sharp> {
  return (loaded ??= import("sharp").then(({ default: sharp }) => {
    sharp.cache(false);
    sharp.concurrency(1);
    return sharp;
  }));
}
