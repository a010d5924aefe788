// Apart from storage.ts so that reading it (`hearth status` lists damaged files) does not load
// the validating loaders and zod.

/** The suffix of a damaged state file set aside: `<name>.damaged-2026-11-23T10-41-07-123Z`. */
export const DAMAGED_MARK = ".damaged-";
