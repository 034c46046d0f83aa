// The page's one copy of the mock, shared by the modules that draw it; app.ts keeps it current.
import { createState } from './state.js';

/** The page's state (see state.ts for how events change it). */
export const store = createState();
