// The mock's limits that the emulator page checks too. No zod here: the page's bundle imports this
// module, and anything it imports ends up in the browser.

/** The most one advance may move the mock clock: ten years of 365.25 days, in seconds. */
export const MAX_ADVANCE_SECONDS = 315_576_000;
